/**
 * Branch names from templates. A rendered name comes from issue text (an identifier, a title),
 * so it is made a valid git ref here rather than trusted: git refuses a push to an invalid one
 * only after the run, and a name such as `-f` or `a..b` must never reach a command line.
 */

const MAX_REF_BYTES = 200;

/**
 * A valid branch name for `wanted` (git check-ref-format rules): control characters, spaces
 * and `~ ^ : ? * [ \` become `-`, `..` and `//` collapse, no component starts with `.` or ends
 * with `.lock`, no leading `-` or `/`, no trailing `/` or `.`, never `@` alone or `@{`. Empty
 * when nothing usable is left.
 */
export function sanitiseBranchName(wanted: string): string {
  let name = wanted
    .normalize('NFC')
    .replace(/[\u0000-\u0020\u007f~^:?*[\\]+/g, '-')
    .replace(/@\{/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/\/{2,}/g, '/');
  name = name
    .split('/')
    .map((part) =>
      part
        .replace(/^\.+/, '')
        .replace(/(\.lock)+$/i, '')
        .replace(/\.+$/, ''),
    )
    .filter((part) => part !== '')
    .join('/');
  name = name.replace(/-{2,}/g, '-').replace(/^[-/]+/, '');
  while (Buffer.byteLength(name) > MAX_REF_BYTES) name = name.slice(0, -1);
  name = name.replace(/[-/.]+$/, '');
  return name === '@' ? '' : name;
}
