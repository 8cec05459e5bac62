export { createNomadDriver, type NomadDriverOptions } from './driver.js';
export { NomadClient, nomadError, type NomadClientOptions, type NomadAnswer, type BlockingOptions } from './client.js';
export { nomadJobId, UNIT_META_KEY } from '../../../model/nomad-job-id.js';
export type * from './types.js';
