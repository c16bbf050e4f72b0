import { z } from 'zod';
import { home } from '../../server/core/home.ts';
import { presentHome } from '../present/home.ts';
import { readTool } from './defineTool.ts';

export const showDotpadTool = readTool({
  name: 'show_dotpad',
  title: 'Home',
  description: 'Start here: your threads (newest activity, new posts), tasks needing you, your hubs and unread inbox count.',
  input: z.object({}),
  // Everyone has a home; what it lists is limited to what the caller may read, in the query.
  policy: () => async () => null,
  run: ({ core, actor, conn }) => home(core, conn, actor),
  present: presentHome,
});
