// A form for `elicitation/create`: its requestedSchema is a flat object (docs/protocol.md),
// one field per property.
import type { ElicitationContentValue } from "@agentclientprotocol/sdk";
import { useState } from "preact/hooks";
import type { Question } from "../asks";
import { type FieldSpec, fieldSpec } from "../form_fields";

type Values = Record<string, ElicitationContentValue>;
type Set = (name: string, value: ElicitationContentValue) => void;

export function QuestionCard({ question }: { question: Question }) {
  const properties = question.schema.properties ?? {};
  const [values, setValues] = useState<Values>({});
  const set: Set = (name, value) => setValues({ ...values, [name]: value });
  return (
    <form
      class="permission question"
      role="dialog"
      aria-labelledby={`q-${question.id}`}
      onSubmit={(event) => {
        event.preventDefault();
        question.answer({ action: "accept", content: values });
      }}
    >
      <h3 id={`q-${question.id}`}>{question.message || "A question"}</h3>
      {Object.entries(properties).map(([name, field]) => (
        <Field
          key={name}
          id={`q-${question.id}-${name}`}
          name={name}
          spec={fieldSpec(name, field)}
          value={values[name]}
          set={set}
        />
      ))}
      <div class="options">
        <button type="submit" class="allow">
          Answer
        </button>
        <button type="button" onClick={() => question.answer({ action: "decline" })}>
          Decline
        </button>
        <button type="button" class="reject" onClick={() => question.answer({ action: "cancel" })}>
          Dismiss
        </button>
      </div>
    </form>
  );
}

type FieldProps = { id: string; name: string; spec: FieldSpec; value: ElicitationContentValue | undefined; set: Set };

function Field({ id, name, spec, value, set }: FieldProps) {
  switch (spec.kind) {
    case "choice":
      return (
        <fieldset>
          <legend>{spec.label}</legend>
          {spec.choices.map((choice) => (
            <label key={choice.value} class="choice">
              <input type="radio" name={id} checked={value === choice.value} onChange={() => set(name, choice.value)} />
              {choice.title}
            </label>
          ))}
        </fieldset>
      );
    case "multi": {
      const picked = Array.isArray(value) ? value : [];
      return (
        <fieldset>
          <legend>{spec.label}</legend>
          {spec.options.map((option) => (
            <label key={option} class="choice">
              <input
                type="checkbox"
                checked={picked.includes(option)}
                onChange={(e) =>
                  set(name, e.currentTarget.checked ? [...picked, option] : picked.filter((p) => p !== option))
                }
              />
              {option}
            </label>
          ))}
        </fieldset>
      );
    }
    case "boolean":
      return (
        <label class="choice">
          <input type="checkbox" checked={value === true} onChange={(e) => set(name, e.currentTarget.checked)} />
          {spec.label}
        </label>
      );
    default: {
      const numeric = spec.kind !== "text";
      return (
        <p class="field">
          <label for={id}>{spec.label}</label>
          <input
            id={id}
            type={numeric ? "number" : "text"}
            step={spec.kind === "integer" ? 1 : undefined}
            value={value === undefined ? "" : String(value)}
            onInput={(e) => set(name, numeric ? Number(e.currentTarget.value) : e.currentTarget.value)}
          />
        </p>
      );
    }
  }
}
