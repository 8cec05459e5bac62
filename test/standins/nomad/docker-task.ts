/**
 * Turns a docker task into a process to run (hashicorp/nomad drivers/docker StartTask, without a
 * Docker engine): pull the image, unpack it into `<task dir>/rootfs`, and build the host command
 * that runs the container's process chrooted there with the container's environment.
 */
import path from 'node:path';
import { containerCommand, findExecutable, type ContainerDirs } from './docker/container-command.js';
import { createRootfs, removeRootfs } from './docker/container-rootfs.js';
import type { ImageSource, PulledImage } from './docker/image-source.js';
import { containerArgv, containerEnv, decodeDockerConfig, type DockerTaskConfig } from './docker/task-config.js';
import type { AllocatedPort } from './env.js';
import type { Json } from './job.js';

export interface DockerLaunch {
  readonly file: string;
  readonly args: readonly string[];
  /** The container's whole environment: nothing of the agent's own. */
  readonly env: Record<string, string>;
  readonly rootfs: string;
}

/** Why a docker task cannot start; `recoverable` failures are retried per the restart policy, as Nomad's RecoverableError. */
export class DockerTaskFailure extends Error {
  constructor(
    message: string,
    readonly recoverable: boolean,
  ) {
    super(message);
  }
}

/** Checks the task's Config and ports before anything is pulled. */
export function checkDockerTask(task: Json, ports: readonly AllocatedPort[]): DockerTaskConfig {
  const decoded = decodeDockerConfig(task.Config ?? {});
  if (typeof decoded === 'string') throw new DockerTaskFailure(decoded, false);
  // With host networking a container port cannot differ from the host port it is published on.
  const mapped = ports.find((p) => p.To > 0 && p.To !== p.Value);
  if (mapped)
    throw new DockerTaskFailure(
      `stand-in docker driver uses host networking and cannot map port "${mapped.Label}" (host ${mapped.Value}) to container port ${mapped.To}`,
      false,
    );
  return decoded;
}

export async function pullImage(source: ImageSource, image: string, config: DockerTaskConfig): Promise<PulledImage> {
  try {
    return await source.pull(image, config.auth);
  } catch (error) {
    throw new DockerTaskFailure(`Failed to pull \`${image}\`: ${(error as Error).message}`, true);
  }
}

export async function prepareContainer(
  taskDir: string,
  allocDir: string,
  config: DockerTaskConfig,
  image: PulledImage,
  taskEnv: Readonly<Record<string, string>>,
  render: (text: string) => string,
): Promise<DockerLaunch> {
  const dirs: ContainerDirs = {
    rootfs: path.join(taskDir, 'rootfs'),
    allocDir: path.join(allocDir, 'alloc'),
    localDir: path.join(taskDir, 'local'),
    secretsDir: path.join(taskDir, 'secrets'),
  };
  const argv = containerArgv(config, image.config, render);
  if (argv.length === 0) throw new DockerTaskFailure('failed to create container: no command specified', false);
  const env = containerEnv(image.config, taskEnv);
  const workDir = config.workDir ? render(config.workDir) : image.config.config?.WorkingDir || '/';
  try {
    await createRootfs(dirs.rootfs, image.layers);
  } catch (error) {
    removeRootfs(dirs.rootfs);
    throw new DockerTaskFailure(`failed to create container: unpacking image: ${(error as Error).message}`, true);
  }
  if (!findExecutable(dirs, argv[0]!, env.PATH ?? '', workDir)) {
    removeRootfs(dirs.rootfs);
    throw new DockerTaskFailure(`failed to start container: exec: "${argv[0]}": executable file not found in $PATH`, true);
  }
  const [file, ...args] = containerCommand(dirs, workDir, argv);
  return { file, args, env, rootfs: dirs.rootfs };
}
