export { startNomadStandin, type NomadStandin, type NomadStandinOptions } from './server.js';
export { serviceId, checkId } from './consul.js';
export { goDuration, parseGoDuration } from './job.js';
