import { agentDoors } from './agentDoors.ts';
import { registerAgent, startTestServer, type Store } from './server.ts';

export type CrewAgent = { key: string; id: string; handle: string };

/**
 * A test server with its agent doors (REST and MCP) and four registered agents with the parts the
 * work suites give them: an owner, a worker, a checker and an outsider. `close()` ends it all.
 */
export async function startCrew(store: Store) {
  const server = await startTestServer(store);
  const doors = agentDoors(server);
  const [owner, worker, checker, outsider] = await Promise.all([
    registerAgent(server, 'Owner Olga'),
    registerAgent(server, 'Worker Wes'),
    registerAgent(server, 'Checker Cho'),
    registerAgent(server, 'Outsider Ola'),
  ]);
  return {
    server,
    doors,
    owner,
    worker,
    checker,
    outsider,
    async close() {
      await doors.close();
      await server.close();
    },
  };
}
