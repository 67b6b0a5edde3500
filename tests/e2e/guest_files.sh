#!/usr/bin/env bash
# End-to-end scenarios about the guest's own files (issue 25, items 1 and 2): guest_files.sh NAME.
# lume-metal never deletes what it did not create in the guest (a linked or non-directory install
# path is refused; rollback removes only what a lume-metal manifest names and says what it left),
# and a guest that puts a FIFO or a device where an installed file was cannot hang a command.
# Each guest's home is a directory of this machine (lib.sh guest_home): the scenarios make the
# guest's odd paths there directly, owned as the guest's own files are.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

BASE=.local/share/lume-metal

# as_guest PATH...: owned by the guest account, as the files its user makes.
as_guest() { chown -h --reference="$(guest_home vm1)" "$@"; }

# bounded NAME ARGS...: lume-metal with --format json, ended (exit 124) if it outlives the test's
# guard: a hang is a failure with the command named, never a test that waits forever.
bounded() {
  local out=$1; shift
  set +e
  timeout 60 "$LM_BIN" "$@" --format json >"$out" 2>"$out.err"
  LM_RC=$?
  set -e
  [ "$LM_RC" -ne 124 ] || fail "lume-metal $* did not end: $(cat "$out.err")"
  jq -e . "$out" >/dev/null || fail "lume-metal $* printed no JSON document: $(cat "$out" "$out.err")"
}

step_detail() { jq -r --arg s "$2" '.vms[0].steps[] | select(.name == $s) | .detail' "$1"; }
has() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }

# A linked install directory: enable writes nothing through it and deletes nothing behind it; a
# VM that an older lume-metal installed through such a link is rolled back removing nothing there,
# and the rollback says what it left. A linked ~/.local is refused the same way.
scenario_linked_base() {
  sim_start --vm vm1
  vm_run vm1
  local home; home=$(guest_home vm1)
  mkdir -p "$home/.local/share" "$home/elsewhere"
  echo precious >"$home/elsewhere/precious.txt"
  ln -s ../../elsewhere "$home/$BASE"
  as_guest "$home/.local" "$home/.local/share" "$home/elsewhere" "$home/elsewhere/precious.txt" "$home/$BASE"
  lm_json "$E2E_DIR/e.json" enable vm1
  [ "$LM_RC" -ne 0 ] || fail "enable through a linked install directory succeeded"
  jq_is "$E2E_DIR/e.json" '.vms[0].error.code' remote
  has "$(jq -r '.vms[0].message' "$E2E_DIR/e.json")" "the guest's ~/$BASE is a symbolic link"
  [ "$(ls -A "$home/elsewhere")" = precious.txt ] || fail "the linked folder changed: $(ls -A "$home/elsewhere")"
  [ "$(cat "$home/elsewhere/precious.txt")" = precious ] || fail "precious.txt changed"
  [ -L "$home/$BASE" ] || fail "the link was removed"

  # ~/.local itself a link: refused the same way, nothing written behind it.
  rm "$home/$BASE"
  mv "$home/.local" "$home/dotlocal"
  ln -s dotlocal "$home/.local"
  as_guest "$home/.local"
  lm_json "$E2E_DIR/e2.json" enable vm1
  [ "$LM_RC" -ne 0 ] || fail "enable through a linked ~/.local succeeded"
  has "$(jq -r '.vms[0].message' "$E2E_DIR/e2.json")" "the guest's ~/.local is a symbolic link"
  [ "$(find "$home/dotlocal" -mindepth 1 | sort | tr '\n' ' ')" = "$home/dotlocal/share " ] ||
    fail "written behind the linked ~/.local: $(find "$home/dotlocal")"
  rm "$home/.local"
  mv "$home/dotlocal" "$home/.local"

  # Installed into a directory; the directory then replaced by a link to a folder of the user's
  # that holds the bundle (as an older lume-metal would have installed through the link).
  lm_json "$E2E_DIR/e3.json" enable vm1
  expect_rc 0 "$E2E_DIR/e3.json"
  mv "$home/$BASE" "$home/installed"
  echo precious >"$home/installed/precious.txt"
  ln -s ../../installed "$home/$BASE"
  as_guest "$home/$BASE" "$home/installed/precious.txt"
  local before; before=$(cd "$home/installed" && find . | sort)
  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  local said; said=$(step_detail "$E2E_DIR/r.json" guest-files)
  has "$said" "removed nothing; left: ~/$BASE (a symbolic link: lume-metal removes nothing through it or in its place)"
  [ -L "$home/$BASE" ] || fail "rollback removed the link"
  [ "$(cd "$home/installed" && find . | sort)" = "$before" ] || fail "rollback changed the linked folder"
}

# A regular file at the install directory's name: enable fails naming it, and its undo leaves the
# file exactly as it was.
scenario_file_base() {
  sim_start --vm vm1
  vm_run vm1
  local home; home=$(guest_home vm1)
  mkdir -p "$home/.local/share"
  echo "the user's notes" >"$home/$BASE"
  as_guest "$home/.local" "$home/.local/share" "$home/$BASE"
  lm_json "$E2E_DIR/e.json" enable vm1
  [ "$LM_RC" -ne 0 ] || fail "enable over a regular file succeeded"
  has "$(jq -r '.vms[0].message' "$E2E_DIR/e.json")" "the guest's ~/$BASE is a regular file, not a directory"
  [ -f "$home/$BASE" ] && [ "$(cat "$home/$BASE")" = "the user's notes" ] || fail "the file at ~/$BASE was not kept"
  # The text output names it too.
  set +e; lm enable vm1 >"$E2E_DIR/e.txt" 2>&1; set -e
  grep -qF "is a regular file, not a directory" "$E2E_DIR/e.txt" || fail "enable text: $(cat "$E2E_DIR/e.txt")"
  [ "$(cat "$home/$BASE")" = "the user's notes" ] || fail "the file at ~/$BASE changed"
}

# Files of the user's inside the install directory survive enable (an upgrade's clean-up) and
# rollback, which names each one it left, in text and JSON.
scenario_user_files_inside() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  local home; home=$(guest_home vm1)
  echo mine >"$home/$BASE/notes.txt"
  mkdir "$home/$BASE/mine"
  echo mine >"$home/$BASE/current/extra.txt"
  as_guest "$home/$BASE/notes.txt" "$home/$BASE/mine" "$home/$BASE/current/extra.txt"
  local id; id=$(readlink "$home/$BASE/current")
  lm_json "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  local said; said=$(step_detail "$E2E_DIR/r.json" guest-files)
  has "$said" "removed 5 files, 1 link and 1 directory of ~/$BASE"
  has "$said" "~/$BASE/$id/extra.txt (not lume-metal's)"
  has "$said" "~/$BASE/notes.txt (not lume-metal's)"
  has "$said" "~/$BASE/mine (no lume-metal manifest in it: not lume-metal's)"
  # The note of which parents the first enable made stays too, for the rollback that finds the
  # directory holding nothing else (issue 36, item 5).
  [ "$(cd "$home/$BASE" && find . ! -name .parents-made | sort | tr '\n' ' ')" = ". ./$id ./$id/extra.txt ./mine ./notes.txt " ] ||
    fail "rollback left: $(cd "$home/$BASE" && find . | sort)"
  # A bundle directory still holding a file of the user's is not replaced (nor moved into).
  lm_json "$E2E_DIR/e2.json" enable vm1
  [ "$LM_RC" -ne 0 ] || fail "enable replaced a bundle directory holding a file of the user's"
  has "$(jq -r '.vms[0].message' "$E2E_DIR/e2.json")" "/Users/lume/$BASE/$id cannot be replaced"
  has "$(jq -r '.vms[0].message' "$E2E_DIR/e2.json")" "left: ~/$BASE/$id/extra.txt (not lume-metal's)"
  [ "$(cat "$home/$BASE/$id/extra.txt")" = mine ] || fail "extra.txt changed"
  [ -z "$(find "$home/$BASE" -maxdepth 1 -name '.staging-*')" ] || fail "the failed enable left its staging directory"
  rm "$home/$BASE/$id/extra.txt"
  lm_json "$E2E_DIR/e3.json" enable vm1
  expect_rc 0 "$E2E_DIR/e3.json"
  set +e; lm rollback vm1 >"$E2E_DIR/r.txt" 2>&1; rc=$?; set -e
  [ "$rc" -eq 0 ] || fail "rollback: $(cat "$E2E_DIR/r.txt")"
  grep -qF "~/$BASE/notes.txt (not lume-metal's)" "$E2E_DIR/r.txt" || fail "rollback text: $(cat "$E2E_DIR/r.txt")"
  [ "$(cat "$home/$BASE/notes.txt")" = mine ] || fail "notes.txt changed"

  # A bundle's subdirectory replaced by a link to a folder of the user's: nothing is removed
  # through it, however the manifest names the files below it.
  lm_json "$E2E_DIR/e4.json" enable vm1
  expect_rc 0 "$E2E_DIR/e4.json"
  id=$(readlink "$home/$BASE/current")
  mv "$home/$BASE/$id/profiles" "$home/myprofiles"
  ln -s ../../../../myprofiles "$home/$BASE/$id/profiles"
  as_guest "$home/$BASE/$id/profiles"
  local kept; kept=$(cd "$home/myprofiles" && ls)
  lm_json "$E2E_DIR/r2.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r2.json"
  has "$(step_detail "$E2E_DIR/r2.json" guest-files)" "~/$BASE/$id/profiles (a symbolic link)"
  [ "$(cd "$home/myprofiles" && ls)" = "$kept" ] && [ -n "$kept" ] || fail "removed through the linked profiles"
}

# strange_installed_file HOW: an installed file replaced by what HOW makes (fifo, devzero, chardev).
# status, doctor and enable end and name it; rollback then proceeds.
strange_installed_file() {
  local how=$1 want=$2
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  local home; home=$(guest_home vm1)
  local id; id=$(readlink "$home/$BASE/current")
  local f="$home/$BASE/$id/liblume-metal-shim.so"
  make_strange() {
    rm -f "$f"
    case $how in
      fifo) mkfifo "$f" ;;
      devzero) ln -s /dev/zero "$f" ;;
      chardev) mknod "$f" c 1 5 ;;
    esac
    as_guest "$f"
  }
  make_strange
  local shown="/Users/lume/$BASE/$id/liblume-metal-shim.so is $want, not a file"
  bounded "$E2E_DIR/s.json" status vm1
  expect_rc 0 "$E2E_DIR/s.json"
  jq_is "$E2E_DIR/s.json" '.vms[0].bundle_verified' false
  has "$(jq -r '.vms[0].message' "$E2E_DIR/s.json")" "bundle not verified: VM 'vm1': $shown"
  bounded "$E2E_DIR/d.json" doctor vm1
  has "$(jq -r '.checks[] | select(.vm == "vm1" and .check == "bundle") | .message' "$E2E_DIR/d.json")" "$shown"
  # The text says the real cause too (issue 36, item 9), not "VM not running, or files differ".
  timeout -s KILL "$LM_HANG_GUARD_FLOOR" "$LM_BIN" status vm1 >"$E2E_DIR/s.txt" 2>"$E2E_DIR/s.txt.err" || fail "status: $(cat "$E2E_DIR/s.txt.err")"
  has "$(cat "$E2E_DIR/s.txt")" "not verified: VM 'vm1': $shown"
  # enable: the bundle is installed again, the step saying why; the odd file is gone with it.
  bounded "$E2E_DIR/e2.json" enable vm1
  expect_rc 0 "$E2E_DIR/e2.json"
  has "$(step_detail "$E2E_DIR/e2.json" bundle)" "$shown"
  [ -f "$f" ] && [ ! -L "$f" ] || fail "enable did not put the shim back"
  # Once more, and rollback proceeds: nothing holds the VM's lock.
  make_strange
  bounded "$E2E_DIR/s2.json" status vm1
  bounded "$E2E_DIR/r.json" rollback vm1
  expect_rc 0 "$E2E_DIR/r.json"
  [ ! -e "$home/$BASE" ] && [ ! -L "$home/$BASE" ] || fail "rollback left: $(find "$home/$BASE")"
}
scenario_fifo() { strange_installed_file fifo "a FIFO"; }
scenario_dev_zero() { strange_installed_file devzero "a symbolic link"; }
scenario_char_device() { strange_installed_file chardev "a character device"; }

name=${1:?usage: guest_files.sh NAME}
"scenario_$name"
check_guest_shells
echo "e2e $name: passed"
