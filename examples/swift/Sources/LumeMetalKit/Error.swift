// The library's errors as a Swift Error: its code (lm_error_code), the code's stable name
// (lm_error_name: "not-found", "canceled", ...) and its message (lm_error_last), which states what
// failed and what was left; advice is the caller's (docs/embedding.md).
import LumeMetal

public struct LumeMetalError: Error, CustomStringConvertible, Sendable {
    /// The library's code: a negative lm_error_code (LM_ENOTFOUND, LM_ECANCELED, ...).
    public let code: Int32
    /// Its stable name, as the JSON documents give it ("not-found", "canceled", ...).
    public let name: String
    /// What failed and what was left, as the library says it.
    public let message: String
    /// A flow that failed still says what happened to each VM it got to (nil for other calls).
    public let result: FlowResult?

    public var description: String { "\(name): \(message)" }

    /// The calling thread's last error, read right after the call that failed: the library keeps
    /// it per thread (lm_error_last), so this must run on the thread that made the call.
    static func last(result: FlowResult? = nil) -> LumeMetalError {
        let error = lm_error_last().pointee
        return LumeMetalError(code: error.code, name: String(cString: lm_error_name(error.code)),
                              message: String(cString: error.message), result: result)
    }

    /// The operation was stopped on request and undid what it had done (LM_ECANCELED).
    public var isCancellation: Bool { code == LM_ECANCELED.rawValue }
    /// The VM, file or key does not exist (LM_ENOTFOUND).
    public var isNotFound: Bool { code == LM_ENOTFOUND.rawValue }
}
