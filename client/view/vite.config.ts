import { fileURLToPath } from 'node:url'
import { defineConfig, type Plugin } from 'vite'

// The MCP Apps view (api/mcpApps.ts serves it as ui://svc/view-v1.html): hosts load one HTML
// document with no network access of its own, so its script and styles are written into the page.
const root = fileURLToPath(new URL('.', import.meta.url))

/** Moves the built script and stylesheet into the HTML page and drops them as files. */
function inlineIntoPage(): Plugin {
  return {
    name: 'dotpad-inline-view',
    enforce: 'post',
    generateBundle(_options, bundle) {
      for (const page of Object.values(bundle)) {
        if (page.type !== 'asset' || !page.fileName.endsWith('.html')) continue
        let html = String(page.source)
        for (const [name, file] of Object.entries(bundle)) {
          const tag = (pattern: string) => new RegExp(`<${pattern}[^>]*?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^>]*>(</script>)?`)
          if (file.type === 'chunk' && file.isEntry) {
            // A function replacement: the code's own `$&` and `$'` are not replacement patterns.
            html = html.replace(tag('script'), () => `<script type="module">${file.code.replace(/<\/script/gi, '<\\/script')}</script>`)
            delete bundle[name]
          } else if (file.type === 'asset' && name.endsWith('.css')) {
            html = html.replace(tag('link'), () => `<style>${String(file.source)}</style>`)
            delete bundle[name]
          }
        }
        page.source = html
      }
    },
  }
}

export default defineConfig({
  root,
  base: './',
  plugins: [inlineIntoPage()],
  build: {
    outDir: '../dist-view',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 100_000,
    modulePreload: false,
    // One script: the MCP SDK's schemas (zod) go in with the rest, as the host loads nothing else.
    rollupOptions: { input: fileURLToPath(new URL('./view-v1.html', import.meta.url)), output: { inlineDynamicImports: true } },
  },
})
