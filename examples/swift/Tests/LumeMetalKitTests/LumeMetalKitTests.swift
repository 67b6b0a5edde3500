// LumeMetalKit against the project's Lume simulator (tests/sim: Lume's HTTP API, real sshd guests
// with the fake Metal device). tests/swift/swift_package.sh starts it with VMs vm1 and vm2 (Lume runs two at most, as Apple allows) and
// gives this process its place in the environment, as tests/e2e/lib.sh does for the tool:
//   LUME_METAL_LUME_URL, LUME_METAL_STATE_DIR, LUME_METAL_PREFS_DIR, HOME (the guests' key),
//   LM_SWIFT_PLIST (the preference's file, made by the script with a value of its own),
//   LM_SWIFT_GUEST_HOMES (the simulated guests' home folders, vm1=PATH:vm2=PATH:...).
// Run by anything else, every test fails saying so: none is skipped.
import Foundation
import LumeSide
import XCTest

@testable import LumeMetalKit

final class Environment {
    static func value(_ name: String) throws -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            throw LumeMetalError(code: -2, name: "invalid",
                                 message: "\(name) is not set: run these tests through tests/swift/swift_package.sh", result: nil)
        }
        return value
    }

    static func options(_ hostPreference: Options.HostPreference = .always) throws -> Options {
        var options = Options()
        options.vmManager = .lumeAPI
        options.hostPreference = hostPreference
        options.lumeURL = try value("LUME_METAL_LUME_URL")
        options.stateDirectory = try value("LUME_METAL_STATE_DIR")
        options.preferencesDirectory = try value("LUME_METAL_PREFS_DIR")
        return options
    }

    /// The preference's file as bytes (nil: absent): rollback must give back exactly these.
    static func preferenceFile() throws -> Data? {
        FileManager.default.contents(atPath: try value("LM_SWIFT_PLIST"))
    }

    /// The guest files lume-metal installs in a VM's home (docs/bundle-format.md).
    static func guestFilesExist(_ vm: String) throws -> Bool {
        let homes = try value("LM_SWIFT_GUEST_HOMES").split(separator: ":").map(String.init)
        guard let home = homes.first(where: { $0.hasPrefix(vm + "=") })?.dropFirst(vm.count + 1) else {
            throw LumeMetalError(code: -3, name: "not-found", message: "no guest home for \(vm) in LM_SWIFT_GUEST_HOMES", result: nil)
        }
        return FileManager.default.fileExists(atPath: "\(home)/.local/share/lume-metal")
    }
}

/// Progress events as they came, from whichever thread the library called from.
final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [StepEvent] = []
    func add(_ event: StepEvent) { lock.lock(); events.append(event); lock.unlock() }
    var all: [StepEvent] { lock.lock(); defer { lock.unlock() }; return events }
    func has(_ vm: String, _ step: String, _ state: StepEvent.State) -> Bool {
        all.contains { $0.vm == vm && $0.step == step && $0.state == state }
    }
}

final class LumeMetalKitTests: XCTestCase {
    func testVersions() {
        XCTAssertEqual(LumeMetal.libraryVersion, LumeMetal.headersVersion)
    }

    /// The whole life of one VM: enabled and proven, status says enabled and verified, rollback
    /// gives the preference back byte for byte and takes the guest files away.
    func testEnableStatusRollback() throws {
        let before = try Environment.preferenceFile()
        let metal = try LumeMetal(options: Environment.options())
        let events = Events()

        let enabled = try metal.enable(["vm1"], progress: { events.add($0) })
        let vm = try XCTUnwrap(enabled["vm1"])
        XCTAssertTrue(vm.succeeded, vm.message)
        XCTAssertEqual(vm.message, "vm1: enabled")
        XCTAssertTrue(enabled.preferenceChanged)
        XCTAssertTrue(vm.bundleVerified)
        XCTAssertEqual(vm.hostPreference, .always)
        XCTAssertEqual(vm.stock?.appleFamily, 1005, "the paravirtual device's own answer: MTLGPUFamilyApple5")
        XCTAssertEqual(vm.shimmed?.shimActive, true)
        XCTAssertGreaterThan(vm.shimmed?.appleFamily ?? 0, 1005)
        for step in ["host-preference", "install", "probe"] {
            XCTAssertTrue(events.has("vm1", step, .started), "no \(step) started")
            XCTAssertTrue(events.has("vm1", step, .done), "no \(step) done")
        }
        XCTAssertEqual(vm.steps.map(\.name).filter { $0 == "probe" }.count, 1)
        XCTAssertNotEqual(try Environment.preferenceFile(), before, "enable did not write the preference")
        XCTAssertTrue(try Environment.guestFilesExist("vm1"))

        let status = try metal.status(["vm1"])
        XCTAssertEqual(status["vm1"]?.journalStatus, "enabled")
        XCTAssertEqual(status["vm1"]?.bundleVerified, true)
        XCTAssertTrue(status.hostPreference.recorded)

        let rolledBack = try metal.rollback(["vm1"])
        XCTAssertEqual(rolledBack["vm1"]?.succeeded, true, rolledBack["vm1"]?.message ?? "")
        XCTAssertTrue(rolledBack.preferenceRestored)
        XCTAssertEqual(try Environment.preferenceFile(), before, "the preference is not as it was")
        XCTAssertFalse(try Environment.guestFilesExist("vm1"))
        XCTAssertEqual(try metal.status(["vm1"])["vm1"]?.journalStatus, "")
    }

    /// A VM the manager does not know: the library's own message, in the error and in the VM's
    /// outcome, and nothing changed.
    func testUnknownVM() throws {
        let before = try Environment.preferenceFile()
        let metal = try LumeMetal(options: Environment.options())
        XCTAssertThrowsError(try metal.enable(["no-such-vm"])) { error in
            guard let error = error as? LumeMetalError else { return XCTFail("not a LumeMetalError: \(error)") }
            XCTAssertEqual(error.name, "not-found")
            XCTAssertTrue(error.isNotFound)
            XCTAssertTrue(error.message.contains("no-such-vm"), error.message)
            XCTAssertEqual(error.result?["no-such-vm"]?.message, error.message)
            XCTAssertEqual(error.result?["no-such-vm"]?.succeeded, false)
        }
        XCTAssertEqual(try Environment.preferenceFile(), before)
    }

    /// A bad VM name never reaches a VM manager: the library refuses it, saying why.
    func testInvalidName() throws {
        let metal = try LumeMetal(options: Environment.options())
        XCTAssertThrowsError(try metal.enable(["bad name/.."])) { error in
            XCTAssertEqual((error as? LumeMetalError)?.name, "invalid")
        }
    }

    /// The library's cancel callback, answered once the bundle's install has started: the enable
    /// stops there and undoes itself (preference, guest files, journal).
    func testCancelledEnableUndoesItself() throws {
        let before = try Environment.preferenceFile()
        let metal = try LumeMetal(options: Environment.options())
        let events = Events()
        let cancel = CancelFlag()
        XCTAssertThrowsError(try metal.enable(["vm2"], progress: { event in
            events.add(event)
            if event.step == "install" && event.state == .started { cancel.set() }
        }, cancel: cancel.get)) { error in
            XCTAssertEqual((error as? LumeMetalError)?.isCancellation, true, "\(error)")
        }
        XCTAssertTrue(events.has("vm2", "install", .started))
        XCTAssertEqual(try Environment.preferenceFile(), before, "the preference was not given back")
        XCTAssertFalse(try Environment.guestFilesExist("vm2"), "guest files left")
        XCTAssertEqual(try metal.status(["vm2"])["vm2"]?.journalStatus, "")
    }

    /// The same through Swift's own cancellation: the Task cancelled while the probe runs.
    func testTaskCancellationUndoesItself() async throws {
        let before = try Environment.preferenceFile()
        let metal = try LumeMetal(options: Environment.options())
        let holder = TaskHolder()
        let task = Task {
            try await metal.enable(["vm2"]) { event in
                if event.step == "probe" && event.state == .started { holder.cancel() }
            }
        }
        holder.set(task)
        do {
            _ = try await task.value
            XCTFail("the cancelled enable succeeded")
        } catch let error as LumeMetalError {
            XCTAssertTrue(error.isCancellation, error.description)
        }
        XCTAssertEqual(try Environment.preferenceFile(), before)
        XCTAssertFalse(try Environment.guestFilesExist("vm2"))
    }

    /// Several VMs in one call, two at a time (enable and rollback), with the host-preference mode
    /// Lume would pass.
    func testSeveralVMs() async throws {
        let before = try Environment.preferenceFile()
        let metal = try LumeMetal(options: Environment.options(.auto))
        let enabled = try await metal.enable(["vm1", "vm2"], jobs: 2)
        XCTAssertEqual(enabled.vms.map(\.name).sorted(), ["vm1", "vm2"])
        for vm in enabled.vms {
            XCTAssertTrue(vm.succeeded, vm.message)
            XCTAssertEqual(vm.hostPreference, .auto)
        }
        let rolledBack = try await metal.rollback([], all: true, jobs: 2)
        XCTAssertEqual(rolledBack.vms.map(\.name).sorted(), ["vm1", "vm2"])
        XCTAssertEqual(try Environment.preferenceFile(), before)
    }

    /// What Lume's side would look like (Sources/LumeSide), run: the hook after a VM starts, the
    /// API's status handler, the rollback command.
    func testLumeSide() async throws {
        let before = try Environment.preferenceFile()
        let url = try Environment.value("LUME_METAL_LUME_URL")
        let log = Log()
        // The hook and the command use the library's default state and preference places, as Lume
        // would: the script points XDG_STATE_HOME and HOME's Library at this test's folders.
        let unlocked = await MetalUnlockOnRun(lumeURL: url).afterStart(vm: "vm1", log: { log.add($0) })
        XCTAssertTrue(unlocked, log.text)
        XCTAssertTrue(log.text.contains("metal-unlock: vm1: enabled"), log.text)

        let (status, body) = await MetalStatusHandler(lumeURL: url).handle(name: "vm1")
        XCTAssertEqual(status, 200)
        let decoded = try JSONDecoder().decode(MetalStatusHandler.Body.self, from: body)
        XCTAssertEqual(decoded, .init(name: "vm1", enabled: true, verified: true, message: decoded.message))

        let lines = try await MetalRollbackCommand(name: "vm1", lumeURL: url).run()
        XCTAssertTrue(lines.contains("vm1: rolled back"), "\(lines)")
        XCTAssertEqual(try Environment.preferenceFile(), before)
    }
}

final class TaskHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<FlowResult, Error>?
    private var cancelled = false
    func set(_ task: Task<FlowResult, Error>) {
        lock.lock(); self.task = task; let now = cancelled; lock.unlock()
        if now { task.cancel() }
    }
    func cancel() {
        lock.lock(); cancelled = true; let task = self.task; lock.unlock()
        task?.cancel()
    }
}

final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return lines.joined(separator: "\n") }
}
