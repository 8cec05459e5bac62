/** `python -m pip install` as every svc build runs it: quiet about pip's own version, never asking a question. */
export const PIP_INSTALL: readonly string[] = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input'];
