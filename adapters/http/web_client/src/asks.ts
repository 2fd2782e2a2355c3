// What the agent asks the user and waits on: permission requests and questions (forms).
// Each is shown until answered, withdrawn by the agent (its request's signal), or dropped
// with the connection; whichever comes first answers it, once.
import type {
  CreateElicitationRequest,
  CreateElicitationResponse,
  ElicitationContentValue,
  ElicitationSchema,
  PermissionOption,
  RequestPermissionRequest,
  RequestPermissionResponse,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import { isRecord } from "./wire";

export type Permission = {
  id: number;
  sessionId: string;
  toolCall: ToolCallUpdate;
  options: PermissionOption[];
  answer: (optionId: string | null) => void;
};

export type QuestionAnswer =
  | { action: "accept"; content: Record<string, ElicitationContentValue> }
  | { action: "decline" }
  | { action: "cancel" };

export type Question = {
  id: number;
  sessionId: string;
  message: string;
  schema: ElicitationSchema;
  answer: (response: QuestionAnswer) => void;
};

export class Asks {
  permissions: Permission[] = [];
  questions: Question[] = [];
  private ids = 0;

  constructor(private readonly changed: () => void) {}

  permission(request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    return new Promise((resolve) => {
      const id = ++this.ids;
      const answer = (optionId: string | null) => {
        if (!this.permissions.some((p) => p.id === id)) return;
        this.permissions = this.permissions.filter((p) => p.id !== id);
        resolve(
          optionId === null ? { outcome: { outcome: "cancelled" } } : { outcome: { outcome: "selected", optionId } },
        );
        this.changed();
      };
      const { sessionId, toolCall, options } = request;
      this.permissions = [...this.permissions, { id, sessionId, toolCall, options, answer }];
      signal.addEventListener("abort", () => answer(null), { once: true });
      this.changed();
    });
  }

  // A form question (elicitation in form mode); a URL one has no form, only its message.
  question(request: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse> {
    return new Promise((resolve) => {
      const id = ++this.ids;
      const answer = (response: QuestionAnswer) => {
        if (!this.questions.some((q) => q.id === id)) return;
        this.questions = this.questions.filter((q) => q.id !== id);
        resolve(response);
        this.changed();
      };
      const sessionId = "sessionId" in request && typeof request.sessionId === "string" ? request.sessionId : "";
      const schema = "requestedSchema" in request && isRecord(request.requestedSchema) ? request.requestedSchema : {};
      this.questions = [...this.questions, { id, sessionId, message: request.message ?? "", schema, answer }];
      signal.addEventListener("abort", () => answer({ action: "cancel" }), { once: true });
      this.changed();
    });
  }

  // The connection is gone: nothing asked on it can be answered any more.
  dropAll(): void {
    for (const permission of this.permissions) permission.answer(null);
    for (const question of this.questions) question.answer({ action: "cancel" });
    this.permissions = [];
    this.questions = [];
  }
}
