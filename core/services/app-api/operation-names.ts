/**
 * The name of each operation of an ASGI app's API: a snake_case identifier,
 * unique within the app, that a generator can use as a method name.
 *
 * From the operationId when there is one. FastAPI makes its default ids from
 * the function's name, the path and the method (`f"{name}{path}"` with every
 * non-word character as `_`, then `_{method}`: `read_item_items__item_id__get`);
 * that tail is taken off again, so the method is called like the function
 * (`read_item`). Without an operationId: method and path
 * (`get_items_item_id`). Names met twice get `_2`, `_3`, … in document order
 * (NameScope).
 */

/** Longer names are cut: a method name is read by people. */
const MAX_NAME_LENGTH = 80;

/** `read_item_items__item_id__get` for GET /items/{item_id} → `read_item`; any other id as it is. */
export function withoutFastApiTail(operationId: string, method: string, path: string): string {
  const tail = `${path.replace(/[^\p{L}\p{N}_]/gu, '_')}_${method.toLowerCase()}`;
  return operationId.endsWith(tail) && operationId.length > tail.length ? operationId.slice(0, -tail.length) : operationId;
}

/** `listPets` → `list_pets`, `Get-Item.v2` → `get_item_v2`; '' when nothing of it is usable. */
export function snakeCase(text: string): string {
  const snake = text
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_NAME_LENGTH)
    .replace(/_+$/, '');
  return /^[0-9]/.test(snake) ? `op_${snake}` : snake;
}

/** The name an operation asks for, before duplicates are told apart. */
export function operationName(operationId: string | null, method: string, path: string): string {
  const fromId = operationId === null ? '' : snakeCase(withoutFastApiTail(operationId, method, path));
  return fromId || snakeCase(`${method} ${path}`) || method.toLowerCase();
}
