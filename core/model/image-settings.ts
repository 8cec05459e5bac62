/**
 * The choices of the image builder's two settings, declared once: the config's value rules
 * (config/schema.ts) and the builders (core/infra/images) both read them from here.
 */

/** What installs images' packages (`imageInstaller`): uv brought on first use with pip as fallback, only uv, or pip. */
export const INSTALLER_CHOICES = ['auto', 'uv', 'pip'] as const;
export type InstallerChoice = (typeof INSTALLER_CHOICES)[number];

/** When an image's bytecode is compiled (`imageBytecode`): after the image is in place, or with its install. */
export const BYTECODE_TIMINGS = ['background', 'build'] as const;
export type BytecodeTiming = (typeof BYTECODE_TIMINGS)[number];
