/**
 * The fixed shell scripts the remote workspace manager runs on a worker host, and
 * the parser of their one answer. Paths never enter a script's text: they travel
 * as environment variables and are used as "$VAR" only, so no root or key can
 * break the quoting. A login shell may print anything before our script runs
 * (a chatty profile), so each script ends with a framed answer, `@ow:<status>`,
 * its payload, then `@ow:end`, and the parser reads only that frame; an answer
 * without its end line was cut short and is not trusted.
 */

/** The workspace root as configured (absolute on the host). */
export const ROOT_VAR = 'ORCHESTRATOR_WORKSPACE_ROOT';
/** A workspace key (a directory name directly under the root). */
export const KEY_VAR = 'ORCHESTRATOR_WORKSPACE_KEY';
/** A second key: the new name of a workspace being renamed. */
export const TARGET_KEY_VAR = 'ORCHESTRATOR_WORKSPACE_TARGET_KEY';
/** The directory a workspace path names as its parent (checked against the root). */
export const PARENT_VAR = 'ORCHESTRATOR_WORKSPACE_PARENT';

const MARK = '@ow:';
const END = `${MARK}end`;

/** Shared prelude: `say STATUS PAYLOAD` prints the framed answer and ends the script. */
const SAY = `say() { printf '\\n${MARK}%s\\n%s\\n${END}\\n' "$1" "$2"; exit 0; }`;

/**
 * Creates the root (`mkdir -p`), enters its real location, and creates the key
 * atomically. Answers `created`/`existing` with the real root, `symlink`/`conflict`
 * with the path found, `fs_root` when the root resolves to `/`, or `io` with the error.
 */
export const PREPARE_SCRIPT = `${SAY}
root=$${ROOT_VAR}
key=$${KEY_VAR}
err=$(mkdir -p -- "$root" 2>&1) || say io "cannot create workspace root $root: $err"
cd -P -- "$root" 2>/dev/null || say io "cannot enter workspace root $root"
real=$(pwd -P) || say io "cannot resolve workspace root $root"
[ "$real" = / ] && say fs_root "$real"
if err=$(mkdir -- "./$key" 2>&1); then say created "$real"; fi
[ -L "./$key" ] && say symlink "$real/$key"
[ -d "./$key" ] && say existing "$real"
[ -e "./$key" ] && say conflict "$real/$key"
say io "cannot create workspace $real/$key: $err"
`;

/**
 * What sits at `$PARENT/$KEY`, where `$PARENT` must resolve to the root's real
 * location. Answers `no_root`, `outside` (payload: the real root), `missing`,
 * `symlink`, `conflict` or `directory`; all but the first two with the real path.
 */
export const INSPECT_SCRIPT = `${SAY}
key=$${KEY_VAR}
cd -P -- "$${ROOT_VAR}" 2>/dev/null || say no_root ""
real=$(pwd -P)
cd -P -- "$${PARENT_VAR}" 2>/dev/null || say outside "$real"
[ "$(pwd -P)" = "$real" ] || say outside "$real"
[ -L "./$key" ] && say symlink "$real/$key"
[ -d "./$key" ] && say directory "$real/$key"
[ -e "./$key" ] && say conflict "$real/$key"
say missing "$real/$key"
`;

/**
 * Deletes the key's directory under the root's real location, only when it is a
 * real directory (never a symlink; `rm -rf` unlinks symlinks inside rather than
 * following them). Answers `removed`, `gone` (nothing there), `symlink`/`conflict`
 * with the path, or `io` with the error.
 */
export const DELETE_SCRIPT = `${SAY}
key=$${KEY_VAR}
cd -P -- "$${ROOT_VAR}" 2>/dev/null || say gone ""
real=$(pwd -P)
[ -L "./$key" ] && say symlink "$real/$key"
if [ ! -d "./$key" ]; then
  [ -e "./$key" ] && say conflict "$real/$key"
  say gone "$real/$key"
fi
err=$(rm -rf -- "./$key" 2>&1)
if [ -e "./$key" ] || [ -L "./$key" ]; then say io "cannot remove workspace $real/$key: $err"; fi
say removed "$real/$key"
`;

/**
 * Renames the key's directory to the target key under the root's real location, only
 * when the source is a real directory and nothing sits at the target. Answers
 * `renamed` with the new real path, `missing` or `taken` with the path that stopped
 * it, or `io` with the error.
 */
export const RENAME_SCRIPT = `${SAY}
key=$${KEY_VAR}
to=$${TARGET_KEY_VAR}
cd -P -- "$${ROOT_VAR}" 2>/dev/null || say missing "$${ROOT_VAR}"
real=$(pwd -P)
{ [ -d "./$key" ] && [ ! -L "./$key" ]; } || say missing "$real/$key"
{ [ -e "./$to" ] || [ -L "./$to" ]; } && say taken "$real/$to"
err=$(mv -- "./$key" "./$to" 2>&1) || say io "cannot rename workspace $real/$key: $err"
say renamed "$real/$to"
`;

/**
 * Lists the real directories (not symlinks) directly under the root whose names
 * could be keys, one a line. Answers `keys`, `no_root` when the root does not
 * exist, or `io` when it exists but cannot be listed.
 */
export const LIST_SCRIPT = `${SAY}
root=$${ROOT_VAR}
if ! cd -P -- "$root" 2>/dev/null; then
  if [ -e "$root" ]; then say io "cannot enter workspace root $root"; fi
  say no_root ""
fi
[ -r . ] || say io "cannot list workspace root $root"
printf '\\n${MARK}keys\\n'
for entry in ./* ./.[!.]* ./..?*; do
  if [ -d "$entry" ] && [ ! -L "$entry" ]; then
    name=\${entry#./}
    case $name in *[!A-Za-z0-9._-]*) ;; *) printf '%s\\n' "$name" ;; esac
  fi
done
printf '${END}\\n'
`;

/** A script's framed answer; null when the output holds no complete frame. */
export function parseAnswer(output: string): { status: string; payload: string } | null {
  const text = `\n${output}`;
  const start = text.indexOf(`\n${MARK}`);
  if (start === -1) return null;
  const statusStart = start + 1 + MARK.length;
  const statusEnd = text.indexOf('\n', statusStart);
  if (statusEnd === -1) return null;
  const end = text.lastIndexOf(`\n${END}\n`);
  if (end < statusEnd) return null;
  const status = text.slice(statusStart, statusEnd);
  // `say` always prints a payload line (maybe empty); the key listing prints lines or nothing.
  const payload = end === statusEnd ? '' : text.slice(statusEnd + 1, end);
  return { status, payload };
}
