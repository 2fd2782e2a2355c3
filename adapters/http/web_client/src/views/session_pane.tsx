// The open session: its header, the conversation, what the agent asks, and the prompt.
import type { Controller } from "../controller";
import type { SessionView } from "../state";
import { Conversation } from "./conversation";
import { PermissionCard } from "./permission_card";
import { PromptBox } from "./prompt_box";
import { QuestionCard } from "./question_card";
import { SessionHeader } from "./session_header";

export function SessionPane({ controller: c, view }: { controller: Controller; view: SessionView }) {
  const permissions = c.asks.permissions; // another session's too: it waits for an answer
  return (
    <main class="session" aria-labelledby="session-title">
      <SessionHeader controller={c} view={view} />
      {c.error && (
        <p class="error" role="alert">
          {c.error}
        </p>
      )}
      <Conversation
        view={view}
        entries={view.entries}
        rev={view.rev}
        onRewind={(id) => void c.rewind(id)}
        onCancelChild={(id) => void c.cancelChild(id)}
      />
      {view.undoToken && (
        <p class="undo" role="status">
          Rewound.{" "}
          <button type="button" onClick={() => void c.undoRewind()}>
            Undo rewind
          </button>
        </p>
      )}
      {c.asks.questions.map((q) => (
        <QuestionCard key={q.id} question={q} />
      ))}
      {permissions.map((p) => (
        <PermissionCard key={p.id} permission={p} elsewhere={p.sessionId !== view.sessionId} />
      ))}
      <PromptBox controller={c} view={view} />
    </main>
  );
}
