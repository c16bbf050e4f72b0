/** `npm run docs`: writes the tool reference of README.md from the tool registry. */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { modelTools } from './tools/registry.ts';
import { toolReference, withReference } from './toolReference.ts';

const path = fileURLToPath(new URL('../README.md', import.meta.url));
writeFileSync(path, withReference(readFileSync(path, 'utf8'), toolReference(modelTools)));
console.log(`README.md: the reference of ${modelTools.length} tools written`);
