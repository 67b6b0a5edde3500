# Sourced by the benchmarks: OpenSSH's client as a user runs it against a simulated guest -- the
# password from SSH_ASKPASS, the guest's host key accepted at first contact into a known_hosts of
# the benchmark's own. One place for what the recipe, `ssh host true` and scp are given.
openssh_opts() { # KNOWN_HOSTS: the options, into the array sshopts
  sshopts=(-o StrictHostKeyChecking=accept-new -o UserKnownHostsFile="$1"
    -o PubkeyAuthentication=no -o PreferredAuthentications=password -o LogLevel=ERROR)
}
openssh_askpass() { # DIR: an askpass that answers the guest's password, exported for ssh and scp
  printf '#!/bin/sh\necho lume\n' >"$1/askpass"
  chmod 700 "$1/askpass"
  export SSH_ASKPASS="$1/askpass" SSH_ASKPASS_REQUIRE=force
}
