# formula_test.rb FORMULA PREFIX: runs a Homebrew formula's `test do` block against a build
# installed into PREFIX, as `brew test` runs it after `brew install` (Homebrew itself needs macOS or
# a Homebrew prefix; this machine has neither). The formula is loaded as Ruby; the class methods
# it calls are recorded, the instance methods its test block uses behave as Homebrew's do
# (Formula#bin/share/testpath, FormulaAssertions#shell_output: the command through /bin/sh, its
# stdout returned and its exit status asserted, minitest's assertions). A DSL method not listed
# here fails the test instead of being ignored. `lipo` in the block is $LM_LIPO when set (this
# machine's llvm-lipo: the same -archs answer as Apple's lipo), put first on PATH as `lipo`.
require "digest"
require "json"
require "pathname"
require "tmpdir"

class Formula
  class AssertionFailed < StandardError; end

  class << self
    attr_reader :test_block, :stable_url, :livecheck_settings

    def url(value, **_options)
      @stable_url = value
    end

    def test(&block)
      @test_block = block
    end

    # livecheck do ... end: its settings recorded (url, strategy, regex), as Homebrew's
    # Livecheck DSL takes them; any other method in the block fails.
    def livecheck(&block)
      recorder = Class.new do
        attr_reader :settings

        def initialize = @settings = {}
        %i[url strategy regex].each { |name| define_method(name) { |value, **_o| @settings[name] = value } }
      end.new
      recorder.instance_eval(&block)
      @livecheck_settings = recorder.settings
    end

    %i[desc homepage license head sha256 depends_on uses_from_macos].each do |name|
      define_method(name) { |*_args, **_options| nil }
    end
  end

  attr_reader :prefix, :testpath

  def initialize(prefix, testpath)
    @prefix = prefix
    @testpath = testpath
  end

  def bin = prefix/"bin"
  def share = prefix/"share"
  def lib = prefix/"lib"

  # Homebrew takes the version from the stable URL; a head-only formula is "HEAD".
  def version
    url = self.class.stable_url
    url ? url[/v?(\d+\.\d+\.\d+)/, 1] : "HEAD"
  end

  def shell_output(cmd, result = 0)
    puts "==> #{cmd}"
    output = `#{cmd}`
    assert_equal result, $?.exitstatus, "exit status of #{cmd}"
    output
  end

  def assert_equal(expected, actual, what = nil)
    return if expected == actual

    raise AssertionFailed, "#{what || "value"}: expected #{expected.inspect}, got #{actual.inspect}"
  end

  def assert_match(matcher, text)
    matcher = Regexp.new(Regexp.escape(matcher)) if matcher.is_a?(String)
    raise AssertionFailed, "expected #{matcher.inspect} to match #{text.inspect}" unless matcher.match?(text)
  end

  def assert_predicate(object, predicate)
    raise AssertionFailed, "expected #{object} to be #{predicate}" unless object.public_send(predicate)
  end
end

abort "usage: formula_test.rb FORMULA PREFIX" unless ARGV.length == 2
formula_file, prefix = ARGV
load formula_file
klass = Formula.subclasses.first or abort "#{formula_file}: no class derived from Formula"
abort "#{formula_file}: no test do block" unless klass.test_block
abort "#{formula_file}: livecheck has no url and strategy" unless klass.livecheck_settings&.key?(:url) &&
                                                                 klass.livecheck_settings&.key?(:strategy)
Dir.mktmpdir do |dir|
  testpath = Pathname(dir).realpath
  if ENV["LM_LIPO"]
    (testpath/".tools").mkpath
    File.symlink(ENV["LM_LIPO"], testpath/".tools/lipo")
    ENV["PATH"] = "#{testpath}/.tools:#{ENV.fetch("PATH")}"
  end
  Dir.chdir(testpath) { klass.new(Pathname(prefix).realpath, testpath).instance_eval(&klass.test_block) }
end
puts "formula test: #{klass.name}'s test block passed against #{prefix}"
