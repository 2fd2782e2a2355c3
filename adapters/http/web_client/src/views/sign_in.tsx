import { useState } from "preact/hooks";

export function SignIn(props: { error: string; onSignIn: (token: string) => void }) {
  const [token, setToken] = useState("");
  return (
    <main class="sign-in">
      <h1>iac-code</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (token.trim()) props.onSignIn(token.trim());
        }}
      >
        <label for="token">Access token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <button type="submit">Sign in</button>
        {props.error && (
          <p class="error" role="alert">
            {props.error}
          </p>
        )}
        <p class="hint">The token the server was started with (IACCODE_ACP_HTTP_TOKEN). It is kept in this tab only.</p>
      </form>
    </main>
  );
}
