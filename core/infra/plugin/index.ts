/**
 * The public API for plugin authors, importable as `svc/plugin`. Everything a
 * plugin needs comes from here, so that core files can move without breaking plugins.
 */
export { PLUGIN_API_VERSION, hookKinds } from './types.js';
export type {
  AppInterface,
  AuthRequest,
  ClientExporter,
  DeployContext,
  ExportedFile,
  ExportedFiles,
  ExportOptions,
  HookName,
  InterfaceApi,
  InterfaceOperation,
  InterfaceOperationBody,
  InterfaceOperationParameter,
  InterfaceOperationResult,
  InterfaceWorkload,
  JobTransformContext,
  PlatformEvent,
  Plugin,
  PluginHooks,
  Principal,
  ResolvedRoute,
  RouteRequest,
  ScalingInput,
  ScalingPolicy,
} from './types.js';
export { canonical, definitionsScope, isSchema, resolveRef, withDefs } from './json-schema.js';
export { versionsText } from './interface-versions.js';
export { isJsonMediaType } from '../../model/media-type.js';
export { NameScope } from './name-scope.js';
export type { ResolvedRef, Schema, SchemaDefs } from './json-schema.js';
export { SchemaTypes, schemaDoc, unionMembers, unionOf } from './schema-types.js';
export type { SchemaModel, SchemaProperty, TypeSpelling } from './schema-types.js';
export { SvcError, errorCodes } from '../../model/errors.js';
export type { ErrorCode, SvcErrorOptions } from '../../model/errors.js';
export type { AppSpec, AutoscalerSpec, Workload, WorkloadKind } from '../../model/workload/types.js';
export type { StateStore, StateEntry, CasOptions } from '../../model/store/types.js';
export type { DomainDirectory, DomainStatus, DomainView } from '../../model/domains/types.js';
export type { NomadJob } from '../../../jobs/types.js';
