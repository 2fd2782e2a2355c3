// The unified diff of one file's text, line by line, for a tool call's `diff` content.
// A plain LCS table: the diffs of tool calls are small, and past a size where the table
// would cost too much the old text is shown removed and the new one added, whole.

export type DiffLine = { sign: " " | "+" | "-"; text: string };

const MAX_TABLE_CELLS = 4_000_000;

export function unifiedDiff(oldText: string, newText: string): DiffLine[] {
  const a = oldText.split("\n");
  const b = newText.split("\n");
  if (a.length * b.length > MAX_TABLE_CELLS) {
    return [...a.map((text) => ({ sign: "-" as const, text })), ...b.map((text) => ({ sign: "+" as const, text }))];
  }
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the length of the longest common subsequence of a[i..] and b[j..].
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      lines.push({ sign: " ", text: a[i] });
      i++;
      j++;
    } else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      lines.push({ sign: "-", text: a[i++] }); // what goes before what comes
    } else {
      lines.push({ sign: "+", text: b[j++] });
    }
  }
  const last = lines[lines.length - 1];
  if (last && last.sign === " " && last.text === "") lines.pop(); // both ended with a newline
  return lines;
}
