import type { Result } from '../../server/core/kernel/result.ts';
import type { ToolData, ToolName, ToolView } from '../../schema/tools/contract.ts';

/**
 * A present's answer for the tools it serves, typed by their contract (schema/tools/contract.ts):
 * `data` as the contract declares it, and `view`, the web app's, likewise. The check is the compiler's
 * alone; nothing is parsed when a tool answers.
 */
export type Answer<N extends ToolName> = Pick<Result, 'parts'> & { data: ToolData<N>; view?: () => ToolView<N> };
