// A Markdown message, rendered block by block: while a reply streams only its last block
// changes, and the finished ones keep their HTML (each block is memoised on its text).
import { memo } from "preact/compat";
import { markdownBlocks, renderMarkdown } from "../markdown";

export function Markdown({ text }: { text: string }) {
  return (
    <div class="markdown">
      {markdownBlocks(text).map((block, i) => (
        <MarkdownBlock key={i} text={block} />
      ))}
    </div>
  );
}

const MarkdownBlock = memo(function MarkdownBlock({ text }: { text: string }) {
  // renderMarkdown's HTML is sanitised (DOMPurify): nothing in it can run.
  return <div class="md-block" dangerouslySetInnerHTML={{ __html: renderMarkdown(text) }} />;
});
