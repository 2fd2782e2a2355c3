// A permission request: the tool call asking, and the agent's options as buttons.
import type { Permission } from "../asks";

export function PermissionCard({ permission, elsewhere }: { permission: Permission; elsewhere: boolean }) {
  const call = permission.toolCall;
  return (
    <section class="permission" role="dialog" aria-labelledby={`perm-${permission.id}`}>
      <h3 id={`perm-${permission.id}`}>Permission: {call?.title ?? "a tool"}</h3>
      {elsewhere && <p class="hint">In another session ({permission.sessionId})</p>}
      {call?.rawInput !== undefined && <pre class="tool-input">{JSON.stringify(call.rawInput, null, 2)}</pre>}
      <div class="options">
        {permission.options.map((option) => (
          <button
            key={option.optionId}
            type="button"
            class={option.kind.startsWith("allow") ? "allow" : "reject"}
            onClick={() => permission.answer(option.optionId)}
          >
            {option.name}
          </button>
        ))}
      </div>
    </section>
  );
}
