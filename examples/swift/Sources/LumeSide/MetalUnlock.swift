// What Lume's side would look like: lume-metal as Lume would call it from its own commands and
// its HTTP API, written against LumeMetalKit. Lume is Swift on macOS (trycua/cua, libs/lume;
// shared/reference/lume.md); its commands are swift-argument-parser AsyncParsableCommands and its
// API handlers (Handlers.swift) answer with a status and a JSON body. Neither dependency is here
// (no package registry is reached from this build), so the shapes are plain structs with the same
// flow: `lume run NAME --metal-unlock` calls `afterStart` once the VM runs; a VM's stop does
// nothing (the guest files and the host preference stay until a rollback); `lume metal rollback`
// gives everything back. The tests run these same calls against the Lume simulator.
import Foundation
import LumeMetalKit

/// `lume run NAME --metal-unlock [--metal-profile P] [--metal-host-preference auto|always|never]`.
public struct MetalUnlockOnRun: Sendable {
    public var profile: String?
    public var hostPreference: Options.HostPreference
    /// Lume's own API (`lume serve`'s port): lume-metal asks it for the VM's state and address.
    public var lumeURL: String?

    public init(profile: String? = nil, hostPreference: Options.HostPreference = .auto, lumeURL: String? = nil) {
        self.profile = profile
        self.hostPreference = hostPreference
        self.lumeURL = lumeURL
    }

    /// Once the VM has started and has an address. The VM keeps running whatever this says: a
    /// failed unlock is reported (Lume's log) and leaves nothing behind (the library undid it).
    public func afterStart(vm: String, log: @escaping @Sendable (String) -> Void) async -> Bool {
        var options = Options()
        options.vmManager = .lumeAPI
        options.hostPreference = hostPreference
        options.lumeURL = lumeURL
        do {
            let metal = try LumeMetal(options: options)
            let result = try await metal.enable([vm], profile: profile) { event in
                if event.state == .done || event.state == .failed {
                    log("metal-unlock: \(event.step): \(event.detail)")
                }
            }
            log("metal-unlock: \(result[vm]?.message ?? "\(vm): enabled")")
            return true
        } catch let error as LumeMetalError {
            log("metal-unlock: \(vm): \(error.message)")
            return false
        } catch {
            log("metal-unlock: \(vm): \(error)")
            return false
        }
    }

    /// When the VM stops: nothing. The unlock belongs to the VM until `lume metal rollback`.
    public func afterStop(vm: String) {}
}

/// `lume metal rollback NAME` or `lume metal rollback --all`.
public struct MetalRollbackCommand: Sendable {
    public var name: String?
    public var all: Bool
    public var lumeURL: String?

    public init(name: String?, all: Bool = false, lumeURL: String? = nil) {
        self.name = name
        self.all = all
        self.lumeURL = lumeURL
    }

    /// What the command prints, one line per VM (the library's message, which names it); throws when any VM could not be rolled back.
    public func run() async throws -> [String] {
        var options = Options()
        options.vmManager = .lumeAPI
        options.lumeURL = lumeURL
        let metal = try LumeMetal(options: options)
        let result = try await metal.rollback(name.map { [$0] } ?? [], all: all)
        var lines = result.vms.map(\.message) // each names its VM
        if result.preferenceRestored { lines.append("host preference restored") }
        return lines
    }
}

/// `GET /lume/vms/:name/metal`, as a handler of Lume's API: 200 and the VM's unlock as JSON, 404
/// with the library's message for a VM it does not know.
public struct MetalStatusHandler: Sendable {
    public struct Body: Codable, Equatable, Sendable {
        public let name: String
        public let enabled: Bool
        public let verified: Bool
        public let message: String

        public init(name: String, enabled: Bool, verified: Bool, message: String) {
            self.name = name
            self.enabled = enabled
            self.verified = verified
            self.message = message
        }
    }

    public var lumeURL: String?
    public init(lumeURL: String? = nil) { self.lumeURL = lumeURL }

    public func handle(name: String) async -> (status: Int, body: Data) {
        var options = Options()
        options.vmManager = .lumeAPI
        options.lumeURL = lumeURL
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do {
            let metal = try LumeMetal(options: options)
            let result = try await metal.status([name])
            guard let vm = result[name] else { return (500, Data()) }
            let body = Body(name: vm.name, enabled: vm.journalStatus == "enabled",
                            verified: vm.bundleVerified, message: vm.message)
            return (200, (try? encoder.encode(body)) ?? Data())
        } catch let error as LumeMetalError {
            return (error.isNotFound ? 404 : 500, Data(#"{"message":\#(json(error.message))}"#.utf8))
        } catch {
            return (500, Data())
        }
    }

    private func json(_ s: String) -> String {
        (try? String(decoding: JSONEncoder().encode(s), as: UTF8.self)) ?? "\"\""
    }
}
