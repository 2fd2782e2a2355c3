"""The demo model's script: the plain requests it understands and what it answers.

Pure and deterministic: the same conversation always gives the same step (no randomness,
no clock), so the demo can be tested word for word. `demo.py` streams the step.
"""

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace

from adapters.llm.demo_follow_ups import after_tools
from adapters.llm.demo_steps import Step, clip
from application.knowledge.system_prompt import ENVIRONMENT_OPEN
from domain.content import ContentBlock, TextBlock, ToolUseBlock, plain_text
from domain.message import Message, Role
from domain.questions import ASK_USER
from domain.tools import EXIT_PLAN_MODE

# A request's wording becomes a step; `call_id` names the tool call it may make.
Answer = Callable[[re.Match[str], str], Step]


@dataclass(frozen=True, slots=True)
class Intent:
    usage: str  # how the help text shows it
    wordings: tuple[str, ...]  # regular expressions; one must match the whole request
    answer: Answer

    def match(self, request: str) -> re.Match[str] | None:
        for wording in self.wordings:
            if found := re.fullmatch(wording, request, re.IGNORECASE | re.DOTALL):
                return found
        return None


# Building blocks of the wordings below.
_PATH = r"[`'\"]?(?P<path>[^\s`'\"]+?)[`'\"]?"
_END = r"[.!?]?"  # a sentence's full stop is not part of a path or URL
_FILES = r"(?:files|directory|dir|folder|contents)"

# Longer requests are not one-line commands; they are not parsed, which also keeps the
# lazy wordings from backtracking through megabytes of pasted text.
MAX_REQUEST = 2_000

_POLITE = re.compile(r"^(?:(?:please|pls|kindly|now|can you|could you|would you)[\s,]+)+", re.I)
# How a message sent while the demo works usually starts ("also run the tests").
_STEERING = re.compile(r"^(?:(?:also|and|then|oh,? and)[\s,:]+)+", re.I)


# ---- one function per step ------------------------------------------------------------


def _call(call_id: str, name: str, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id=call_id, name=name, input=arguments)


def _list_files(m: re.Match[str], call_id: str) -> Step:
    path = m["path"] or "."
    where = "the working directory" if path == "." else f"`{path}`"
    return Step(
        thinking=f"The user wants to see what is in {where}. Listing it is a read, so it "
        "needs no permission.",
        text=f"I'll list the files in {where}.",
        tool=_call(call_id, "list_files", path=path),
    )


def _read_file(m: re.Match[str], call_id: str) -> Step:
    path = m["path"]
    return Step(
        thinking=f"The user asked for `{path}`. I'll read it and summarise what I find.",
        text=f"Let me read `{path}`.",
        tool=_call(call_id, "read_file", path=path),
    )


def _search(m: re.Match[str], call_id: str) -> Step:
    text, path = _unquote(m["pattern"]), m["path"]
    where = f" in `{path}`" if path else ""
    arguments: dict[str, object] = {"pattern": _literal(text)}
    if path:
        arguments["path"] = path
    return Step(
        thinking=f"A search for “{text}”{where}. grep finds every line that mentions it.",
        text=f"I'll search for “{text}”{where}.",
        tool=_call(call_id, "grep", **arguments),
    )


def _write_file(m: re.Match[str], call_id: str) -> Step:
    path, content = m["path"], _unquote(m["content"] or "")
    return Step(
        thinking=f"The user wants `{path}` written. Writing changes their files, so the "
        "editor will ask them first.",
        text=f"I'll create `{path}`; you will be asked to allow the write.",
        tool=_call(call_id, "write_file", path=path, content=content),
    )


def _edit_file(m: re.Match[str], call_id: str) -> Step:
    path, old, new = m["path"], _unquote(m["old"]), _unquote(m["new"])
    return Step(
        thinking=f"An edit to `{path}`: “{old}” becomes “{new}”. Edits ask for permission.",
        text=f"I'll replace “{old}” with “{new}” in `{path}`; you will be asked to allow it.",
        tool=_call(call_id, "edit_file", path=path, old_string=old, new_string=new),
    )


def _run(m: re.Match[str], call_id: str) -> Step:
    # "Can you run pytest?": the question mark ends the question, not the command.
    command = _unquote(m["command"].rstrip().removesuffix("?"))
    return Step(
        thinking=f"The user wants `{command}` run. Running commands always asks for "
        "permission first.",
        text=f"I'll run `{command}`; you will be asked to allow it.",
        tool=_call(call_id, "bash", command=command),
    )


def _fetch(m: re.Match[str], call_id: str) -> Step:
    url = m["url"]
    return Step(
        thinking=f"The user wants the page at {url}. I'll fetch it and say what it holds.",
        text=f"I'll fetch {url}.",
        tool=_call(call_id, "web_fetch", url=url),
    )


def _plan(m: re.Match[str], call_id: str) -> Step:
    goal = m["goal"].strip().rstrip(".!?") or "the task"
    return Step(
        thinking=f"The user wants a plan for {goal}. A good plan starts from what exists, "
        "makes the smallest change that works, and proves it with tests. No tools needed "
        "to write it down.",
        text=f"Here is a plan for “{goal}”:\n\n"
        "1. Look at the current state: list the files and read the code the change "
        "touches.\n"
        "2. Search for related code, tests and TODO notes, so nothing that depends on it is "
        "missed.\n"
        "3. Write down the smallest change that does the job, and the tests that will show "
        "it works.\n"
        "4. Make the change in small steps, running the tests after each one.\n"
        "5. Review the diff, update the documentation, and summarise what changed and what "
        "did not.\n\n"
        "This is the offline demo model, so the plan is a template; a real model "
        "(IAC_CODE_PROVIDER=anthropic with an API key) would fit it to your code.",
    )


def _ask(m: re.Match[str], call_id: str) -> Step:
    question = m["question"].strip()
    choices = [c.strip() for c in (m["choices"] or "").split(",") if c.strip()]
    arguments: dict[str, object] = {"question": question}
    if choices:
        arguments["choices"] = choices
    return Step(
        thinking="The user wants to be asked a question. I'll put it to them as a form.",
        text="I'll ask you that; your editor shows the question.",
        tool=_call(call_id, ASK_USER, **arguments),
    )


def _help(m: re.Match[str], call_id: str) -> Step:
    return Step(thinking="The user asked what I can do. I'll list the requests I know.", text=HELP)


def _unknown(said: str) -> Step:
    return Step(
        thinking="I don't recognise this request, so I'll say what the demo understands.",
        text=f"You said: {said or '(nothing)'}\n\n{HELP}",
    )


# The requests, most specific first: the first intent with a wording that matches the
# whole request wins ("run ls" is a command, not a listing; "write a plan" is a plan, not a
# file; "show files" lists, "show X" reads). Wordings are case-insensitive.
INTENTS: tuple[Intent, ...] = (
    Intent(
        "run COMMAND (asks permission)",
        (r"(?:run|execute|exec)\s+(?:the\s+command\s+)?(?P<command>.+)",),
        _run,
    ),
    Intent(
        "fetch URL",
        (r"(?:fetch|download|get|open|browse)\s+<?(?P<url>https?://[^\s>]+?)>?" + _END,),
        _fetch,
    ),
    Intent(
        "plan TASK",
        (
            r"(?:(?:make|write|give\s+me)\s+)?(?:a\s+)?plan\b"
            r"(?:\s+(?:for|to|how\s+to|out))?\s*:?\s*(?P<goal>.*)",
        ),
        _plan,
    ),
    Intent(
        "create FILE with TEXT (asks permission)",
        (
            r"(?:create|write|make|add)\s+(?:a\s+|the\s+)?(?:new\s+)?(?:file\s+)?"
            r"(?:called\s+|named\s+)?" + _PATH + r"(?:\s+(?:with|containing|saying)\b\s*"
            r"(?:the\s+)?(?:(?:text|content|contents)\b)?\s*:?\s*(?P<content>.*))?",
            r"(?:write|put|save)\s+(?P<content>.+?)\s+(?:in|into|to)\s+(?:a\s+)?(?:new\s+)?"
            r"(?:file\s+)?" + _PATH + _END,
        ),
        _write_file,
    ),
    Intent(
        "edit FILE: replace OLD with NEW (asks permission)",
        (
            r"(?:edit|change|modify|update|in)\s+(?:the\s+)?(?:file\s+)?"
            + _PATH
            + r"\s*[:,]?\s+replace\s+(?P<old>.+?)\s+with\s+(?P<new>.+)",
            r"replace\s+(?P<old>.+?)\s+with\s+(?P<new>.+?)\s+in\s+(?:the\s+)?(?:file\s+)?"
            + _PATH
            + _END,
        ),
        _edit_file,
    ),
    Intent(
        "list files [in DIR]",
        (
            rf"(?:(?:list|ls)(?:\s+(?:the|all|my))?(?:\s+{_FILES})?"
            rf"|show(?:\s+me)?(?:\s+(?:the|all|my))?\s+{_FILES})"
            rf"(?:\s+(?:in|of|under|inside))?(?:\s+(?:the\s+)?{_PATH}"
            rf"(?:\s+(?:directory|dir|folder))?)?{_END}",
        ),
        _list_files,
    ),
    Intent(
        "read FILE",
        (
            r"(?:read|show(?:\s+me)?|open|cat|view|display|print)\s+(?:the\s+)?"
            r"(?:file\s+|contents?\s+of\s+)?" + _PATH + _END,
        ),
        _read_file,
    ),
    Intent(
        "search TEXT [in DIR]",
        (
            r"(?:search(?:\s+for)?|find|grep|look\s+for)"
            r"(?:\s+(?:the\s+)?(?:text|word|string|pattern))?\s+(?P<pattern>.+?)"
            r"(?:\s+in\s+(?:the\s+)?" + _PATH + r")?" + _END,
        ),
        _search,
    ),
    Intent(
        "ask QUESTION[: CHOICE, CHOICE…] (needs a client that shows forms)",
        (r"ask(?:\s+me)?\s+(?P<question>[^:]+?)(?:\s*:\s*(?P<choices>.+?))?",),
        _ask,
    ),
    Intent("help (this list)", (r"(?:help|what\s+can\s+you\s+do|commands|usage)\W*",), _help),
)

# What `help` lists, in this fixed order (README.md's): looking first, then changes, then
# the rest, `help` last. Every intent is listed once
# (tests/unit/adapters/demo_model/test_conversations.py).
HELP_ORDER: tuple[str, ...] = (
    "list files [in DIR]",
    "read FILE",
    "search TEXT [in DIR]",
    "create FILE with TEXT (asks permission)",
    "edit FILE: replace OLD with NEW (asks permission)",
    "run COMMAND (asks permission)",
    "fetch URL",
    "plan TASK",
    "ask QUESTION[: CHOICE, CHOICE…] (needs a client that shows forms)",
    "help (this list)",
)

HELP = (
    "This is the offline demo model: a scripted agent for trying tools, permission "
    "requests and cancelling without an API key. It understands:\n"
    + "".join(f"- {usage}\n" for usage in HELP_ORDER)
    + "For a real model, set IAC_CODE_PROVIDER=anthropic and IAC_CODE_API_KEY."
)


# ---- after a tool ran: describe its result --------------------------------------------


# ---- the entry point ------------------------------------------------------------------


def next_step(messages: Sequence[Message], tools: Collection[str]) -> Step:
    """What the demo model answers to this conversation, offered these tools."""
    last = messages[-1] if messages else None
    if last is not None and last.role is Role.USER and last.is_tool_results_only:
        return after_tools(messages)
    said = _user_words(last.content) if last is not None else ""
    if last is not None and last.tool_results:
        # Tool results and words in one message: the user steered while the tool ran.
        return _steered(after_tools(messages), said, _answer(messages, said, tools))
    return _answer(messages, said, tools)


def _answer(messages: Sequence[Message], said: str, tools: Collection[str]) -> Step:
    request = _STEERING.sub("", _POLITE.sub("", said))
    for intent in INTENTS if len(request) <= MAX_REQUEST else ():
        if match := intent.match(request):
            step = intent.answer(match, _call_id(messages))
            if intent.answer is _plan and EXIT_PLAN_MODE in tools:
                # In plan mode the plan goes to the user for approval, as a real model's would.
                plan = _call(_call_id(messages), EXIT_PLAN_MODE, plan=step.text)
                step = replace(step, tool=plan)
            if step.tool is not None and step.tool.name not in tools:
                return _unavailable(step.tool.name)
            return step
    return _unknown(said)


def _steered(described: Step, said: str, next_one: Step) -> Step:
    """What the tool did, then the request the user added while it ran."""
    return Step(
        thinking=f"{described.thinking} While it ran, the user added: “{clip(said)}”. "
        "I'll take that up next.",
        text=f"{described.text}\n\nYou added: “{clip(said)}”. {next_one.text}",
        tool=next_one.tool,
    )


def _user_words(content: tuple[ContentBlock, ...]) -> str:
    """What the user asked last, without the environment block the agent sends with it.

    Every prompt is stored with its environment block first, and a prompt cancelled before
    any reply stays in the history with none after it: the view the model gets then merges
    it and the next prompt into one user message ([environment, "help", environment, "read
    a.txt"]). Only the newest request, after the last environment block, is answered."""
    starts = [
        i
        for i, block in enumerate(content)
        if isinstance(block, TextBlock) and block.text.startswith(ENVIRONMENT_OPEN)
    ]
    newest = content[starts[-1] + 1 :] if starts else content
    return plain_text(newest).strip()


def _unavailable(name: str) -> Step:
    return Step(
        thinking=f"That needs the {name} tool, which I was not given here.",
        text=f"I can't do that here: the {name} tool is not available in this session.",
    )


def _call_id(messages: Sequence[Message]) -> str:
    # Counting earlier calls keeps ids unique within a session and the same for the
    # same history.
    earlier = sum(len(m.tool_uses) for m in messages)
    return f"toolu_demo_{earlier + 1:03d}"


def _literal(text: str) -> str:
    """The words as a regex that finds them as typed (re.escape would also escape spaces,
    which reads badly in the tool call's title)."""
    return "".join("\\" + c if c in ".^$*+?{}[]\\|()" else c for c in text)


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "`'\"":
        return text[1:-1]
    return text
