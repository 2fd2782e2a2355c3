import { render } from "preact";
import { App } from "./app";
import "./styles.css";

// A one-time link opened in a tab that already shows the page changes only the hash.
window.addEventListener("hashchange", () => {
  if (location.hash.startsWith("#token=")) location.reload();
});

const root = document.getElementById("app");
if (root) render(<App />, root); // index.html has it: without it there is nothing to show anyway
