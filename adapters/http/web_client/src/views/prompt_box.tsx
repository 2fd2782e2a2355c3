// The prompt: sends, or while this tab's turn runs queues, steers or cancels; a leading
// slash offers the session's commands (arrow keys, Tab or Enter to pick one).
import { useState } from "preact/hooks";
import type { Controller } from "../controller";
import type { SessionView } from "../state";

export function PromptBox({ controller: c, view }: { controller: Controller; view: SessionView }) {
  const [text, setText] = useState("");
  const [picked, setPicked] = useState(0);
  const slash = /^\/(\S*)$/.exec(text);
  const matches = slash ? view.commands.filter((cmd) => cmd.name.startsWith(slash[1])).slice(0, 8) : [];
  const active = matches[Math.min(picked, Math.max(0, matches.length - 1))];
  const hinted = /^\/(\S+)\s/.exec(text)?.[1];
  const hint = hinted ? view.commands.find((cmd) => cmd.name === hinted)?.hint : undefined;
  const send = () => {
    const value = text.trim();
    if (!value) return;
    setText("");
    void c.prompt(value); // while a turn runs: queued after it
  };
  const steer = () => {
    const value = text.trim();
    if (!value) return;
    setText("");
    void c.steer(value);
  };
  const choose = (name: string) => {
    setText(`/${name} `);
    setPicked(0);
  };
  return (
    <form
      class="prompt"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      {view.queue.length > 0 && (
        <ol class="queue" aria-label="Queued prompts">
          {view.queue.map((q) => (
            <li key={q.id}>
              {q.preview}
              {q.queuedBy ? ` (${q.queuedBy})` : ""}
            </li>
          ))}
        </ol>
      )}
      {view.steeringWaiting > 0 && <p class="hint">{view.steeringWaiting} message(s) waiting to reach the agent</p>}
      {matches.length > 0 && (
        // The ARIA combobox pattern: the prompt keeps the focus and names the active option
        // (aria-activedescendant), so the options themselves are never focused.
        // biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: see above
        <ul class="commands" role="listbox" id="command-list" aria-label="Slash commands">
          {matches.map((cmd) => (
            // biome-ignore lint/a11y/useFocusableInteractive: an option of the combobox above
            <li
              key={cmd.name}
              id={`cmd-${cmd.name}`}
              // biome-ignore lint/a11y/noNoninteractiveElementToInteractiveRole: the same
              role="option"
              aria-selected={cmd === active ? "true" : "false"}
              onMouseDown={(e) => {
                e.preventDefault();
                choose(cmd.name);
              }}
            >
              <strong>/{cmd.name}</strong> {cmd.description}
              {cmd.hint ? <em> {cmd.hint}</em> : null}
            </li>
          ))}
        </ul>
      )}
      <label for="prompt" class="visually-hidden">
        Prompt
      </label>
      <textarea
        id="prompt"
        rows={2}
        value={text}
        placeholder={hint ?? "Ask, or type / for commands"}
        aria-autocomplete="list"
        aria-controls={matches.length ? "command-list" : undefined}
        aria-activedescendant={active ? `cmd-${active.name}` : undefined}
        onInput={(e) => {
          setText(e.currentTarget.value);
          setPicked(0);
        }}
        onKeyDown={(e) => {
          if (matches.length && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
            e.preventDefault();
            setPicked((picked + (e.key === "ArrowDown" ? 1 : matches.length - 1)) % matches.length);
          } else if (matches.length && active && (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey))) {
            e.preventDefault();
            choose(active.name);
          } else if (e.key === "Enter" && !e.shiftKey) {
            e.preventDefault();
            send();
          } else if (e.key === "Escape" && view.running) {
            void c.cancel();
          }
        }}
      />
      {hint && <p class="hint" id="command-hint">{`/${hinted} ${hint}`}</p>}
      <div class="prompt-actions">
        {view.running ? (
          <>
            <button type="button" class="cancel" onClick={() => void c.cancel()}>
              Cancel
            </button>
            <button type="button" onClick={steer} title="Tell the agent now, inside the running turn">
              Steer
            </button>
            <button type="submit" title="Run after the current turn">
              Queue
            </button>
          </>
        ) : (
          <button type="submit">Send</button>
        )}
      </div>
    </form>
  );
}
