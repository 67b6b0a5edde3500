# Homebrew formula (this repository is also the tap: docs/releasing.md).
#   brew tap lume-metal/lume-metal https://github.com/lume-metal/lume-metal
#   brew install lume-metal
# scripts/release.sh --formula writes a release's url and sha256 below; until the first release
# the formula builds main (brew install --HEAD lume-metal).
class LumeMetal < Formula
  desc "Unlock the full Metal feature level in Lume, Tart and UTM macOS VMs"
  homepage "https://github.com/lume-metal/lume-metal"
  license "MIT"
  head "https://github.com/lume-metal/lume-metal.git", branch: "main"

  # A release is a tag vMAJOR.MINOR.PATCH whose GitHub release carries the tarball named above
  # (docs/releasing.md); `brew livecheck lume-metal` finds the newest.
  livecheck do
    url :stable
    strategy :github_latest
  end

  # The host is built for macOS 13 (Ventura) and later: its minimum deployment target, and the
  # oldest system whose libcurl (7.84.0, /usr/lib/libcurl.4.dylib, loaded at run time) it is made
  # for (README.md, "On macOS"). The dependency versions it is built and checked against in CI
  # (docs/testing.md, "Where users install it"): libplist 2.2 to 2.7, libssh2 1.10 to 1.11.1,
  # cJSON 1.7.15 to 1.7.19, OpenSSL 3. Homebrew installs its newest of each; install checks the
  # lower bounds (MINIMUM_VERSIONS), so an older tap's versions fail with what to upgrade.
  MINIMUM_VERSIONS = {
    "libplist"  => "2.2.0",
    "libssh2"   => "1.10.0",
    "cjson"     => "1.7.15",
    "openssl@3" => "3.0.0",
  }.freeze
  # The `macos` preset's options for what is built and for which system (CMakePresets.json); the
  # preset's others say how CI cross-builds (its compiler and headers) and are not for a Mac.
  MACOS_PRESET_OPTIONS = %w[
    -DLUME_METAL_TESTS=OFF
    -DLUME_METAL_BENCHMARKS=OFF
    -DCMAKE_OSX_DEPLOYMENT_TARGET=13.0
    -DLUME_METAL_CURL_LIBRARY_NAME=/usr/lib/libcurl.4.dylib
  ].freeze

  depends_on "cmake" => :build
  depends_on "pkgconf" => :build
  depends_on "cjson"
  depends_on "libplist"
  depends_on "libssh2"
  depends_on macos: :ventura
  depends_on "openssl@3"

  uses_from_macos "curl"

  def install
    # The guest shim is universal: arm64, arm64e and x86_64 (guest/CMakeLists.txt's
    # OSX_ARCHITECTURES, which CMake passes as -arch flags). Homebrew's compiler shims strip -arch
    # unless the formula permits it, and a single-slice shim would not load into arm64e programs
    # (every platform binary) in a guest with SIP off; test do checks the slices.
    ENV.permit_arch_flags
    MINIMUM_VERSIONS.each do |dep, min|
      next if Formula[dep].version >= Version.new(min)

      odie "lume-metal needs #{dep} #{min} or later (found #{Formula[dep].version}): brew upgrade #{dep}"
    end
    # The tool, its library, the guest bundle for macOS guests (built natively), completions and
    # the man page; the tests need the Linux simulator and are not built. The options are the
    # `macos` preset's (CMakePresets.json; tests/release checks that they agree), which CI
    # cross-builds on every run.
    system "cmake", "-S", ".", "-B", "build", *MACOS_PRESET_OPTIONS, *std_cmake_args
    system "cmake", "--build", "build"
    system "cmake", "--install", "build"
  end

  test do
    # The installed tool, its built-in profiles and the bundle it copies into guests; the host
    # preference read from a plist file in the test's own directory (nothing of the Mac's touched).
    assert_match(/\Alume-metal \d+\.\d+\.\d+\n\z/, shell_output("#{bin}/lume-metal --version"))
    assert_match(/\Alume-metal \d+\.\d+\.\d+\n\z/, shell_output("#{bin}/lume-metal version"))
    assert_match "profile published (published): valid", shell_output("#{bin}/lume-metal profile lint published")
    assert_match(/\Ausage: lume-metal doctor /, shell_output("#{bin}/lume-metal doctor --help"))
    assert_match(/^published +Apple9 \(1009\) +65536 /, shell_output("#{bin}/lume-metal profile list"))
    profile = JSON.parse(shell_output("#{bin}/lume-metal profile show published --format json"))
    assert_equal 1009, profile["profile"]["capabilities"]["apple_family_max"]
    manifest = JSON.parse((share/"lume-metal/bundles/darwin-universal/manifest.json").read)
    assert_equal "DYLD_INSERT_LIBRARIES", manifest["injection_variable"]
    manifest["files"].each do |f|
      assert_equal f["sha256"], Digest::SHA256.file(share/"lume-metal/bundles/darwin-universal"/f["name"]).hexdigest
    end
    (testpath/"prefs").mkpath
    status = shell_output("#{bin}/lume-metal host status --prefs-dir #{testpath}/prefs " \
                          "--state-dir #{testpath}/state")
    assert_match "value:    absent", status
    # A usage error: exit 2, saying what is missing.
    assert_match "name at least one VM", shell_output("#{bin}/lume-metal enable 2>&1", 2)
    # The shim's slices, as the build was asked for them (install above): the arm64e slice keeps
    # it loading into platform programs when SIP is off.
    shim = share/"lume-metal/bundles/darwin-universal/LumeMetalShim.dylib"
    assert_equal %w[arm64 arm64e x86_64], shell_output("lipo -archs #{shim}").split.sort
  end
end
