export { startNomadStandin, type NomadStandin, type NomadStandinOptions } from './server.js';
export { serviceId, checkId } from './consul.js';
export { goDuration, parseGoDuration } from './job.js';
export type { ImageSource, PulledImage, RegistryAuth, OciImageConfig } from './docker/image-source.js';
export { OciLayoutImageSource } from './docker/layout-image-source.js';
export { RegistryImageSource } from './docker/registry-image-source.js';
