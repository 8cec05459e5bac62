/** Where svc's layers unpack in an image, and the base image it starts from unless configured. */
export const RUNTIME_DIR = '/opt/svc/runtime';
export const PACKAGES_DIR = '/opt/svc/packages';
/** `{python}` in the base image name stands for the image's Python version. */
export const DEFAULT_BASE_IMAGE = 'python:{python}-slim';
