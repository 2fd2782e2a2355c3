// A question's form fields, read from its requestedSchema's properties: what input each
// one needs and its label. The SDK types a property as one of the schema's kinds or any
// other `{ type, ... }`, so each is read as plain fields, by narrowing, and an unknown one
// is a text field.
import type { ElicitationPropertySchema } from "@agentclientprotocol/sdk";
import { asString, type Fields, isRecord } from "./wire";

export type FieldSpec =
  | { kind: "choice"; label: string; choices: { value: string; title: string }[] }
  | { kind: "multi"; label: string; options: string[] }
  | { kind: "boolean" | "number" | "integer" | "text"; label: string };

export function fieldSpec(name: string, property: ElicitationPropertySchema): FieldSpec {
  const field: Fields = property;
  const label = asString(field.title) ?? (name === "answer" ? "Answer" : name);
  // One of several titled values (radio buttons), whatever the declared type.
  if (Array.isArray(field.oneOf)) {
    const choices = field.oneOf.filter(isRecord).map((choice) => {
      const value = String(choice.const);
      return { value, title: asString(choice.title) ?? value };
    });
    return { kind: "choice", label, choices };
  }
  if (field.type === "array") {
    const items = field.items;
    const options = isRecord(items) && Array.isArray(items.enum) ? items.enum.map(String) : [];
    return { kind: "multi", label, options };
  }
  if (field.type === "boolean" || field.type === "number" || field.type === "integer")
    return { kind: field.type, label };
  return { kind: "text", label };
}
