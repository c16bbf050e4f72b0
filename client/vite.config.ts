import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'

// The build is started from the project root, so anchor everything to this folder.
const root = fileURLToPath(new URL('.', import.meta.url))

export default defineConfig({
  root,
  base: '/',
  plugins: [vue()],
  define: {
    // Every component uses <script setup>; dropping the Options API and prod devtools keeps the bundle small.
    __VUE_OPTIONS_API__: 'false',
    __VUE_PROD_DEVTOOLS__: 'false',
    __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Keep every asset a real file so nothing depends on data: URLs beyond images.
    assetsInlineLimit: 0,
    // The pad page's chunk (Tiptap, ProseMirror, Yjs, the sync provider) is ~530 kB and loads only on pads.
    chunkSizeWarningLimit: 600,
  },
})
