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

  depends_on "cmake" => :build
  depends_on "pkgconf" => :build
  depends_on "cjson"
  depends_on "libplist"
  depends_on "libssh2"
  depends_on "openssl@3"
  depends_on :macos

  uses_from_macos "curl"

  def install
    # The guest shim is universal: arm64, arm64e and x86_64 (guest/CMakeLists.txt's
    # OSX_ARCHITECTURES, which CMake passes as -arch flags). Homebrew's compiler shims strip -arch
    # unless the formula permits it, and a single-slice shim would not load into arm64e programs
    # (every platform binary) in a guest with SIP off; test do checks the slices.
    ENV.permit_arch_flags
    # The tool, its library, the guest bundle for macOS guests (built natively), completions and
    # the man page; the tests need the Linux simulator and are not built.
    system "cmake", "-S", ".", "-B", "build", "-DLUME_METAL_TESTS=OFF", "-DLUME_METAL_BENCHMARKS=OFF",
           *std_cmake_args
    system "cmake", "--build", "build"
    system "cmake", "--install", "build"
  end

  test do
    # The installed tool, its built-in profiles and the bundle it copies into guests; the host
    # preference read from a plist file in the test's own directory (nothing of the Mac's touched).
    assert_match(/\Alume-metal \d+\.\d+\.\d+\n\z/, shell_output("#{bin}/lume-metal --version"))
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
