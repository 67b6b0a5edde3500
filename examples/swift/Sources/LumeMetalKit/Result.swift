// A flow's result (lm_flow_result) copied into Swift values. The C result is the library's: it is
// read here and freed by the caller of `init(_:)` exactly once (LumeMetal.perform's defer), so no
// Swift value points into it. Every result struct starts with `size`, its sizeof as the library
// that filled it was built; a field newer than the oldest library this package supports is read
// only when that size covers it (`has`, the Swift form of LM_HAS_FIELD, docs/embedding.md "ABI").
import LumeMetal

/// LM_HAS_FIELD: the library that filled `value` (whose first field says its size) has `field`.
func has<T, V>(_ value: T, size: Int, _ field: KeyPath<T, V>) -> Bool {
    guard let offset = MemoryLayout<T>.offset(of: field) else { return false }
    return size >= offset + MemoryLayout<V>.size
}

/// A NUL-terminated C array field (imported as a tuple of CChar) as a String.
func string<T>(fromCArray array: T) -> String {
    withUnsafeBytes(of: array) { raw in
        let bytes = raw.bindMemory(to: UInt8.self)
        let end = bytes.firstIndex(of: 0) ?? bytes.count
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}

func string(_ pointer: UnsafePointer<CChar>?) -> String? {
    pointer.map { String(cString: $0) }
}

public struct FlowResult: Sendable {
    /// One step a VM's operation took, as on_step reported it.
    public struct Step: Sendable {
        public let name: String
        public let succeeded: Bool
        public let seconds: Double
        public let detail: String
    }

    /// What the guest reports through the probe (lm_report), stock or with the shim.
    public struct Report: Sendable {
        public let device: String
        /// The highest Apple GPU family the device says it supports, as MTLGPUFamily numbers it:
        /// 1005 (Apple5) stock in a VM, 1009 (Apple9) with the shim.
        public let appleFamily: Int
        public let maxThreadgroupMemory: UInt64
        public let shimActive: Bool

        init(_ report: OpaquePointer) {
            device = String(cString: lm_report_device(report))
            appleFamily = Int(lm_report_apple_family(report))
            maxThreadgroupMemory = lm_report_max_threadgroup_memory(report)
            shimActive = lm_report_shim_active(report) != 0
        }
    }

    /// One VM's outcome (lm_vm_outcome).
    public struct VM: Sendable {
        public let name: String
        /// 0, or the library's error code for this VM (LM_EUNSUPPORTED: the guest cannot be
        /// unlocked and was kept stock).
        public let code: Int32
        /// What happened, or what went wrong and what was left ("vm1: enabled": it names the VM).
        public let message: String
        /// The VM's state as its manager said it ("running", "stopped", ...) and which manager.
        public let status: String
        public let manager: String
        public let restarted: Bool
        public let alreadyEnabled: Bool
        /// status: running, and not certainly started since the preference changed.
        public let restartPending: Bool
        /// The guest files match the bundle's manifest.
        public let bundleVerified: Bool
        public let bundleID: String
        public let profile: String
        /// status: the journal's record ("enabled", "enabling", "rolling-back"; "" unknown; nil
        /// for other operations, or from a library without the field).
        public let journalStatus: String?
        /// The mode the VM was enabled with (nil: from a library without the field).
        public let hostPreference: Options.HostPreference?
        /// Its manager no longer knows it.
        public let gone: Bool
        public let stock: Report?
        public let shimmed: Report?
        public let steps: [Step]

        public var succeeded: Bool { code == 0 }

        init(_ outcome: UnsafePointer<lm_vm_outcome>) {
            let o = outcome.pointee
            let size = o.size
            name = string(fromCArray: o.vm)
            code = Int32(o.rc)
            message = string(o.message) ?? ""
            status = string(fromCArray: o.info.status)
            manager = string(fromCArray: o.info.manager)
            restarted = o.restarted != 0
            alreadyEnabled = o.already_enabled != 0
            restartPending = o.restart_pending != 0
            bundleVerified = o.bundle_verified != 0
            bundleID = string(fromCArray: o.bundle_id)
            profile = string(fromCArray: o.profile)
            journalStatus = has(o, size: size, \.journal_status) ? string(o.journal_status) : nil
            hostPreference = has(o, size: size, \.pref_mode) ? Options.HostPreference(o.pref_mode) : nil
            gone = has(o, size: size, \.gone) && o.gone != 0
            stock = o.stock.map(Report.init)
            shimmed = o.shimmed.map(Report.init)
            var steps: [Step] = []
            for i in 0..<o.nsteps {
                guard let step = o.steps[i] else { continue }
                let s = step.pointee
                steps.append(Step(name: string(s.name) ?? "", succeeded: s.state == LM_STEP_DONE,
                                  seconds: s.seconds, detail: string(s.detail) ?? ""))
            }
            self.steps = steps
        }
    }

    /// The host preference after the run (lm_host_pref_info).
    public struct HostPreferenceState: Sendable {
        /// "cfpreferences", or "plist:" and the file.
        public let store: String
        public let domain: String
        public let key: String
        public let present: Bool
        /// "true (bool)", ...; "" when absent.
        public let value: String
        /// A change of lume-metal's is in effect, and what was there before it ("absent file", ...).
        public let recorded: Bool
        public let original: String
    }

    public let vms: [VM]
    public let hostPreference: HostPreferenceState
    /// This run changed the host preference; rollback gave it back.
    public let preferenceChanged: Bool
    public let preferenceRestored: Bool
    public let seconds: Double

    /// The VM of that name, if the result has it.
    public subscript(vm: String) -> VM? { vms.first { $0.name == vm } }

    init(_ result: UnsafePointer<lm_flow_result>) {
        let r = result.pointee
        var vms: [VM] = []
        for i in 0..<r.count {
            if let outcome = r.vms[i] { vms.append(VM(outcome)) }
        }
        self.vms = vms
        hostPreference = HostPreferenceState(
            store: string(fromCArray: r.pref.store), domain: string(fromCArray: r.pref.domain),
            key: string(fromCArray: r.pref.key), present: r.pref.present != 0,
            value: string(fromCArray: r.pref.value), recorded: r.pref.recorded != 0,
            original: string(fromCArray: r.pref.original))
        preferenceChanged = r.pref_changed != 0
        preferenceRestored = r.pref_restored != 0
        seconds = r.seconds
    }
}
