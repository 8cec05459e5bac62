/**
 * `errors.js` and `errors.d.ts` of a generated package: svc's stable error
 * codes with their HTTP status, taken from `errorCodes` of this svc when the
 * client is generated, so a client knows every code its server may send.
 */
import { errorCodes } from 'svc/plugin';
import { jsDoc, tsString } from './names.js';

const codes = (): [string, { status: number; summary: string }][] => Object.entries(errorCodes);

export function errorsJs(): string {
  return [
    '/** Every stable error code of svc (docs/errors.md), with the HTTP status it comes with. */',
    'export const ERROR_STATUS = Object.freeze({',
    ...codes().map(([code, info]) => `  ${code}: ${info.status},`),
    '});',
    '',
  ].join('\n');
}

export function errorsDts(): string {
  return [
    "/** A stable error code of svc (docs/errors.md): what SvcError#code holds for svc's own errors. */",
    'export type SvcErrorCode =',
    ...codes().flatMap(([code, info]) => [...jsDoc(info.summary, '  '), `  | ${tsString(code)}`]),
    '  ;',
    '',
    '/** Every code, with the HTTP status it comes with. */',
    'export declare const ERROR_STATUS: { readonly [code in SvcErrorCode]: number };',
    '',
  ].join('\n');
}
