/**
 * bench/floor-proxy.ts as its own process, so that `npm run bench` reads its
 * CPU from /proc like the other proxies'. Prints its URL, then serves until
 * it is signalled.
 *
 *   node dist/bench/gateway/floor-child.js <socket path> <connections> [collect|stream]
 */
import { startFloorProxy, type FloorMode } from '../floor-proxy.js';

const [socketPath, connections, mode = 'collect'] = process.argv.slice(2);
const floor = await startFloorProxy(socketPath!, Number(connections), mode as FloorMode);
process.stdout.write(`${floor.url}\n`);
process.once('SIGTERM', () => void floor.close().then(() => process.exit(0)));
