// LumeMetal: one lm_context and the three calls Lume makes -- enable, status, rollback -- for one
// VM or several, with progress and cancellation. The C library does the work; this file owns the
// context, turns Swift options into the C ones, and frees every result the library hands out
// exactly once (a defer right after the call that allocated it).
//
// Threads (docs/embedding.md, "Callbacks and threads"): a context runs one operation at a time, so
// every call here holds `operation` for its whole length; progress may come from the library's
// own threads (enable with jobs > 1), one call at a time. The library keeps the last error per
// thread: it is read on the thread that made the call, before anything else runs there.
import Dispatch
import Foundation
import LumeMetal

/// One step of an operation as it happens (lm_step_event).
public struct StepEvent: Sendable {
    public enum State: Sendable { case started, done, failed, waiting }
    /// The VM the step is about ("" for the host alone).
    public let vm: String
    /// "host-preference", "start", "ready", "install", "probe", ...
    public let step: String
    public let state: State
    /// Seconds since the step (or, waiting, the wait) started.
    public let elapsed: Double
    /// What was done, the error, or what is awaited.
    public let detail: String

    init(_ event: UnsafePointer<lm_step_event>) {
        let e = event.pointee
        vm = string(e.vm) ?? ""
        step = string(e.name) ?? ""
        switch e.state {
        case LM_STEP_STARTED: state = .started
        case LM_STEP_DONE: state = .done
        case LM_STEP_WAITING: state = .waiting
        default: state = .failed
        }
        elapsed = e.elapsed
        detail = string(e.detail) ?? ""
    }
}

public typealias ProgressHandler = @Sendable (StepEvent) -> Void

/// What the context's C callbacks reach (its callback_data): the running operation's progress
/// handler and cancellation. Set and cleared under `operation`; read by the library's threads.
final class Callbacks: @unchecked Sendable {
    private let lock = NSLock()
    private var progress: ProgressHandler?
    private var shouldCancel: (() -> Bool)?

    func begin(progress: ProgressHandler?, shouldCancel: (() -> Bool)?) {
        lock.lock(); defer { lock.unlock() }
        self.progress = progress
        self.shouldCancel = shouldCancel
    }

    func end() { begin(progress: nil, shouldCancel: nil) }

    func step(_ event: StepEvent) {
        lock.lock(); let progress = self.progress; lock.unlock()
        progress?(event)
    }

    func cancelled() -> Bool {
        lock.lock(); let shouldCancel = self.shouldCancel; lock.unlock()
        return shouldCancel?() ?? false
    }
}

/// A flag set from one thread (a Task's cancellation handler) and read from another (the
/// library's should_cancel).
final class CancelFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    func get() -> Bool { lock.lock(); defer { lock.unlock() }; return value }
}

// The C callbacks: plain functions (no captures), which find the Callbacks through callback_data.
private let onStep: lm_step_fn = { data, event in
    guard let data, let event else { return }
    Unmanaged<Callbacks>.fromOpaque(data).takeUnretainedValue().step(StepEvent(event))
}

private let shouldCancel: lm_cancel_fn = { data in
    guard let data else { return 0 }
    return Unmanaged<Callbacks>.fromOpaque(data).takeUnretainedValue().cancelled() ? 1 : 0
}

public final class LumeMetal: @unchecked Sendable {
    private let context: OpaquePointer
    private let callbacks = Callbacks()
    private let operation = NSLock()

    /// The version of the library loaded (lm_version), and of the headers this was built with.
    public static var libraryVersion: String { String(cString: lm_version()) }
    public static let headersVersion = LUME_METAL_VERSION

    public init(options: Options = Options()) throws {
        var opts = lm_options()
        // The options' version this package is built with: the library reads exactly its fields.
        guard lm_options_init(&opts, UInt32(LM_OPTIONS_VERSION)) == 0 else { throw LumeMetalError.last() }
        opts.vm_manager = options.vmManager.kind
        opts.host_preference = options.hostPreference.mode
        opts.ready_timeout = options.readyTimeout ?? 0
        opts.connect_timeout = options.connectTimeout ?? 0
        opts.command_timeout = options.commandTimeout ?? 0
        opts.keep_host = options.keepHost ? 1 : 0
        opts.no_wait = options.noWait ? 1 : 0
        opts.dry_run = options.dryRun ? 1 : 0
        opts.on_step = onStep
        opts.should_cancel = shouldCancel
        // The Callbacks live as long as this object, which outlives the context (deinit).
        opts.callback_data = Unmanaged.passUnretained(callbacks).toOpaque()
        // lm_context_new copies every string: these copies are freed right after it.
        var copies: [UnsafeMutablePointer<CChar>] = []
        defer { copies.forEach { free($0) } }
        func c(_ s: String?) -> UnsafePointer<CChar>? {
            guard let s, let copy = strdup(s) else { return nil }
            copies.append(copy)
            return UnsafePointer(copy)
        }
        opts.lume_url = c(options.lumeURL)
        opts.state_dir = c(options.stateDirectory)
        opts.prefs_dir = c(options.preferencesDirectory)
        opts.ssh_user = c(options.sshUser)
        opts.ssh_key = c(options.sshKey)
        opts.bundle_dir = c(options.bundleDirectory)
        var context: OpaquePointer?
        guard lm_context_new(&context, &opts) == 0, let context else { throw LumeMetalError.last() }
        self.context = context
    }

    deinit { lm_context_free(context) }

    // MARK: Blocking calls (a caller's own thread; `cancel` is polled by the library)

    /// Enable VMs: the host preference (as `Options.hostPreference` says), the VM's level, the
    /// guest bundle installed and verified, the probe's proof. `profile` nil: the default profile;
    /// a built-in name or a profile file's path otherwise. Throws when any VM failed, with every
    /// VM's outcome in the error's `result`; a cancelled enable undid what it did.
    public func enable(_ vms: [String], profile: String? = nil, jobs: Int = 1,
                       progress: ProgressHandler? = nil, cancel: (() -> Bool)? = nil) throws -> FlowResult {
        var prof: OpaquePointer?
        let rc = profile.map { lm_profile_resolve(&prof, $0) } ?? lm_profile_builtin(&prof, lm_profile_default_name())
        guard rc == 0 else { throw LumeMetalError.last() }
        defer { lm_profile_free(prof) }
        return try perform(progress: progress, cancel: cancel) { context, out in
            withCStrings(vms) { names in lm_flow_enable(context, names, vms.count, prof, Int32(jobs), &out) }
        }
    }

    /// What the state knows of VMs (none named: every VM it knows). Reads only.
    public func status(_ vms: [String] = []) throws -> FlowResult {
        try perform(progress: nil, cancel: nil) { context, out in
            withCStrings(vms) { names in lm_flow_status(context, names, vms.count, &out) }
        }
    }

    /// Roll VMs back (`all`: every VM the state knows): guest files removed, the journal's entry
    /// gone, the host preference restored exactly when the last VM goes; `restart` restarts running
    /// VMs that still carry the unlocked level; `jobs` VMs at once.
    public func rollback(_ vms: [String], all: Bool = false, restart: Bool = true, jobs: Int = 1,
                         progress: ProgressHandler? = nil, cancel: (() -> Bool)? = nil) throws -> FlowResult {
        try perform(progress: progress, cancel: cancel) { context, out in
            withCStrings(vms) { names in
                lm_flow_rollback(context, names, vms.count, all ? 1 : 0, restart ? 1 : 0, Int32(jobs), &out)
            }
        }
    }

    // MARK: async (a Task's cancellation is the library's cancel; the call runs off the pool)

    public func enable(_ vms: [String], profile: String? = nil, jobs: Int = 1,
                       progress: ProgressHandler? = nil) async throws -> FlowResult {
        try await detached { cancel in try self.enable(vms, profile: profile, jobs: jobs, progress: progress, cancel: cancel) }
    }

    public func status(_ vms: [String] = []) async throws -> FlowResult {
        try await detached { _ in try self.status(vms) }
    }

    public func rollback(_ vms: [String], all: Bool = false, restart: Bool = true, jobs: Int = 1,
                         progress: ProgressHandler? = nil) async throws -> FlowResult {
        try await detached { cancel in
            try self.rollback(vms, all: all, restart: restart, jobs: jobs, progress: progress, cancel: cancel)
        }
    }

    // MARK: -

    /// One flow call under the context's lock, its result copied and freed once, whether it failed
    /// or not (the library sets *out even when it fails; NULL only when out of memory).
    private func perform(progress: ProgressHandler?, cancel: (() -> Bool)?,
                         _ call: (OpaquePointer, inout UnsafeMutablePointer<lm_flow_result>?) -> Int32) throws -> FlowResult {
        operation.lock(); defer { operation.unlock() }
        callbacks.begin(progress: progress, shouldCancel: cancel)
        defer { callbacks.end() }
        var out: UnsafeMutablePointer<lm_flow_result>?
        let rc = call(context, &out)
        // Read before anything else can call the library on this thread.
        let failure = rc < 0 ? LumeMetalError.last() : nil
        defer { lm_flow_result_free(out) }
        let result = out.map { FlowResult(UnsafePointer($0)) }
        if let failure {
            throw LumeMetalError(code: failure.code, name: failure.name, message: failure.message, result: result)
        }
        guard let result else { throw LumeMetalError.last() }
        return result
    }

    /// The blocking call on a thread of its own (a flow waits for VMs for minutes: not on Swift's
    /// cooperative pool), the Task's cancellation turned into should_cancel.
    private func detached<T: Sendable>(_ body: @escaping @Sendable (@escaping () -> Bool) throws -> T) async throws -> T {
        let flag = CancelFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
                let thread = Thread {
                    continuation.resume(with: Result { try body(flag.get) })
                }
                thread.start()
            }
        } onCancel: {
            flag.set()
        }
    }
}

/// The names as the C array `const char *const *` for the length of `body`.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R) -> R {
    if strings.isEmpty { return body(nil) }
    let copies: [UnsafePointer<CChar>?] = strings.map { UnsafePointer(strdup($0)) }
    defer { copies.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
    return copies.withUnsafeBufferPointer { body($0.baseAddress) }
}
