// The options Lume would pass, as Swift values; LumeMetal's initializer turns them into the C
// library's lm_options of the version this package is built with (lm_options_init sets `version`:
// a newer library reads exactly that version's fields, docs/embedding.md "ABI").
import LumeMetal

public struct Options: Sendable {
    /// Which VM manager answers for the VMs (lm_vm_manager_kind).
    public enum VMManager: Sendable {
        case automatic, lumeAPI, lumeCLI, tart, utm, none

        var kind: lm_vm_manager_kind {
            switch self {
            case .automatic: return LM_VM_MANAGER_AUTO
            case .lumeAPI: return LM_VM_MANAGER_LUME_API
            case .lumeCLI: return LM_VM_MANAGER_LUME_CLI
            case .tart: return LM_VM_MANAGER_TART
            case .utm: return LM_VM_MANAGER_UTM
            case .none: return LM_VM_MANAGER_NONE
            }
        }
    }

    /// Whether enable sets the host preference (lm_host_pref_mode; docs/lume-metal.md).
    public enum HostPreference: String, Sendable {
        /// Set it first, restarting a running VM as the rule says (the published recipe).
        case always
        /// Prove with the shim alone first; set it, restart and prove again only when needed.
        case auto
        /// Never touch the host: kernels that fail without it are an error (not-proven).
        case never

        var mode: lm_host_pref_mode {
            switch self {
            case .always: return LM_HOST_PREF_ALWAYS
            case .auto: return LM_HOST_PREF_AUTO
            case .never: return LM_HOST_PREF_NEVER
            }
        }

        init?(_ mode: lm_host_pref_mode) {
            switch mode {
            case LM_HOST_PREF_ALWAYS: self = .always
            case LM_HOST_PREF_AUTO: self = .auto
            case LM_HOST_PREF_NEVER: self = .never
            default: return nil
            }
        }
    }

    public var vmManager: VMManager = .automatic
    public var hostPreference: HostPreference = .always
    /// Lume's HTTP API (nil: http://127.0.0.1:7777). Lume itself passes the port it serves on.
    public var lumeURL: String?
    /// Seconds to wait for a VM to be ready (nil: the library's 300), to connect (nil: 10), for a
    /// guest command (nil: 120).
    public var readyTimeout: Double?
    public var connectTimeout: Double?
    public var commandTimeout: Double?
    /// Where the state journal and the preferences live (nil: the library's defaults; absolute).
    public var stateDirectory: String?
    public var preferencesDirectory: String?
    /// The guest account and key (nil: the manager's account, ~/.ssh/id_ed25519 or id_ecdsa).
    public var sshUser: String?
    public var sshKey: String?
    /// Where the guest bundles are (nil: the installation's share/lume-metal).
    public var bundleDirectory: String?
    /// Keep the host preference when the last VM is rolled back (a fleet's choice).
    public var keepHost = false
    /// A VM another process is working on fails at once (locked) instead of being waited for.
    public var noWait = false
    /// Plan only: nothing is changed.
    public var dryRun = false

    public init() {}
}
