import { invalid } from '../../schema/errors.ts';
import type { Tool } from './defineTool.ts';

/**
 * Arguments the spec names that this server does not take yet, and would otherwise ignore: each is
 * refused where ignoring it changes what the call does (SPEC part 4 "Extra arguments" ignores only the
 * harmless). `confirm_sensitive` and `view_token` ignored change nothing, so they are not here.
 */
const UNTAKEN: readonly {
  name: string;
  /** Whether this tool, given this value, would do something other than the caller asked. */
  refuses(tool: Tool, value: unknown): boolean;
  why(tool: Tool): string;
}[] = [
  // None now: `propose` (edit_pad) is taken since Checked hubs came (a suggestion for others to check).
];

/** Refuses, as `invalid` and before anything runs, an argument of UNTAKEN the tool would ignore to the caller's surprise. */
export function refuseUntakenArguments(tool: Tool, args: Record<string, unknown>, ignored: readonly string[]): void {
  for (const argument of UNTAKEN) {
    if (!ignored.includes(argument.name) || !argument.refuses(tool, args[argument.name])) continue;
    throw invalid(argument.why(tool), { issues: [{ path: argument.name, message: `Not taken by ${tool.name} yet.` }] });
  }
}
