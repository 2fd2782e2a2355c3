// The bearer token: from a one-time link (#token=…, then removed from the address bar and
// history) or the sign-in form; kept in this tab's sessionStorage only.
const KEY = "iac-code.token";

export function takeTokenFromLink(): void {
  const match = /^#token=([^&]*)/.exec(location.hash);
  if (!match) return;
  sessionStorage.setItem(KEY, decodeURIComponent(match[1]));
  history.replaceState(null, "", location.pathname + location.search);
}

export function storedToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeToken(token: string | null): void {
  if (token) sessionStorage.setItem(KEY, token);
  else sessionStorage.removeItem(KEY);
}
