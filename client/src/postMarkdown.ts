// The one Markdown renderer lives in schema/, shared with the server's pages for readers without JavaScript.
export * from '../../schema/postMarkdown.ts'
