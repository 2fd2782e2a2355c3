import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type DiffLine, unifiedDiff } from "../src/diff";

const lines = (diff: DiffLine[]) => diff.map((line) => `${line.sign}${line.text}`);

describe("unifiedDiff", () => {
  test("the same text is all context, without the empty line after the last newline", () => {
    assert.deepEqual(lines(unifiedDiff("a\nb\n", "a\nb\n")), [" a", " b"]);
  });

  test("a line added in the middle is shown where it goes", () => {
    assert.deepEqual(lines(unifiedDiff("a\nc\n", "a\nb\nc\n")), [" a", "+b", " c"]);
  });

  test("a line removed is shown removed", () => {
    assert.deepEqual(lines(unifiedDiff("a\nb\nc\n", "a\nc\n")), [" a", "-b", " c"]);
  });

  test("a changed line is its old text removed, then its new text added", () => {
    assert.deepEqual(lines(unifiedDiff("a\nold\nc\n", "a\nnew\nc\n")), [" a", "-old", "+new", " c"]);
  });

  test("a new file is every line added", () => {
    assert.deepEqual(lines(unifiedDiff("", "a\nb\n")), ["+a", "+b"]);
  });

  test("a last line that loses its newline shows both endings", () => {
    assert.deepEqual(lines(unifiedDiff("a\n", "a")), [" a", "-"]);
  });

  test("the longest common lines are kept, the rest replaced", () => {
    const diff = unifiedDiff("x\na\nb\ny\n", "a\nz\nb\n");
    assert.deepEqual(lines(diff), ["-x", " a", "+z", " b", "-y"]);
  });

  test("past the size of the table, the old text is removed and the new one added, whole", () => {
    const old = Array.from({ length: 2001 }, (_, i) => `old ${i}`).join("\n");
    const fresh = Array.from({ length: 2001 }, (_, i) => (i === 0 ? "old 0" : `new ${i}`)).join("\n");
    const diff = unifiedDiff(old, fresh);
    assert.equal(diff.length, 4002);
    assert.ok(diff.slice(0, 2001).every((line) => line.sign === "-"));
    assert.ok(diff.slice(2001).every((line) => line.sign === "+"));
    assert.equal(diff[2001].text, "old 0"); // not matched up: no table was built
  });
});
