import type { z } from 'zod';
import type { Actor } from '../../server/core/actor.ts';
import type { Core } from '../../server/core/context.ts';
import type { Result } from '../../server/core/result.ts';

/** MCP tool annotations (SPEC part 4 "Annotations"). */
export type Annotations = {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  openWorldHint: boolean;
  idempotentHint?: boolean;
};

export type ToolContext = { core: Core; actor: Actor };

export type Tool = {
  name: string;
  title: string;
  /** What it does and when to use it: agents choose tools by this text. */
  description: string;
  input: z.ZodObject;
  annotations: Annotations;
  readOnly: boolean;
  /** `model`: MCP, REST and the web app; `app`: the web app only. */
  audience: 'model' | 'app';
  run(context: ToolContext, args: Record<string, unknown>): Promise<Result>;
};

type Definition<I extends z.ZodObject> = {
  name: string;
  title: string;
  description: string;
  input: I;
  audience?: 'model' | 'app';
  run(context: ToolContext, args: z.output<I>): Promise<Result>;
};

/**
 * Reads and writes come through different doors, so a tool cannot claim the wrong annotations:
 * a read is never destructive or open world; every write is open world.
 */
export function readTool<I extends z.ZodObject>(definition: Definition<I>): Tool {
  return finish(definition, {
    title: definition.title,
    readOnlyHint: true,
    destructiveHint: false,
    openWorldHint: false,
  });
}

export function writeTool<I extends z.ZodObject>(
  definition: Definition<I> & { destructive?: boolean; idempotent?: boolean },
): Tool {
  return finish(definition, {
    title: definition.title,
    readOnlyHint: false,
    destructiveHint: definition.destructive ?? false,
    openWorldHint: true,
    ...(definition.idempotent ? { idempotentHint: true } : {}),
  });
}

function finish<I extends z.ZodObject>(definition: Definition<I>, annotations: Annotations): Tool {
  return {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    input: definition.input,
    annotations,
    readOnly: annotations.readOnlyHint,
    audience: definition.audience ?? 'model',
    run: definition.run as Tool['run'],
  };
}
