/** `npm run docs`: writes docs/tools.md, the tool reference, from the tool registry. */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { modelTools } from './tools/registry.ts';
import { toolReferencePage } from './toolReference.ts';

const path = fileURLToPath(new URL('../docs/tools.md', import.meta.url));
writeFileSync(path, toolReferencePage(modelTools));
console.log(`docs/tools.md: the reference of ${modelTools.length} tools written`);
