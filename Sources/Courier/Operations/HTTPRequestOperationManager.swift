import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Makes ``HTTPRequestOperation``s for a base URL and runs them on its ``operationQueue`` (AFNetworking 2's
/// `AFHTTPRequestOperationManager`).
///
/// URLs resolve against ``baseURL`` exactly as ``HTTPSessionManager``'s do, and requests are built by
/// ``requestSerializer``. Each operation gets a copy of the manager's settings when it is made (its response
/// serializer, credential, security policy and callback queues), so changing the manager afterwards does not change
/// operations already made.
///
/// The verbs (`get`, `post`, …) enqueue their operation at once. When the request cannot be built (a bad URL,
/// parameters that cannot be encoded, a file part that cannot be read) they call `failure` with a `nil` operation,
/// asynchronously on the completion queue, and return `nil`.
public final class HTTPRequestOperationManager: Sendable {
    private struct Settings {
        var responseSerializer: any ResponseSerializer = JSONResponseSerializer()
        var credential: Credential?
        var shouldUseCredentialStorage = true
        var securityPolicy = SecurityPolicy.default
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
    }

    /// The URL relative paths resolve against; a non-empty path gets a trailing `/`.
    public var baseURL: URL? { builder.baseURL }
    /// Where the verbs' operations run; a plain `OperationQueue`.
    public let operationQueue = OperationQueue()
    /// The transport every operation's requests go through.
    public let transport: any Transport
    /// Builds the requests; its session sends nothing.
    private let builder: HTTPSessionManager
    private let settings = Locked(Settings())

    /// A manager for `baseURL`, on ``URLConnectionOperation/sharedTransport``.
    public convenience init(baseURL: URL? = nil) {
        self.init(baseURL: baseURL, transport: URLConnectionOperation.sharedTransport)
    }

    /// A manager for `baseURL` whose operations go through `transport`.
    public init(baseURL: URL?, transport: any Transport) {
        self.transport = transport
        builder = HTTPSessionManager(baseURL: baseURL, configuration: .ephemeral, transport: transport)
    }

    /// Builds every request; default ``HTTPRequestSerializer``.
    public var requestSerializer: any RequestSerializer {
        get { builder.requestSerializer }
        set { builder.requestSerializer = newValue }
    }

    /// Copied onto each operation; default ``JSONResponseSerializer``.
    public var responseSerializer: any ResponseSerializer {
        get { settings.withLock { $0.responseSerializer } }
        set { settings.withLock { $0.responseSerializer = newValue } }
    }

    /// Copied onto each operation (``URLConnectionOperation/credential``).
    public var credential: Credential? {
        get { settings.withLock { $0.credential } }
        set { settings.withLock { $0.credential = newValue } }
    }

    /// Copied onto each operation (``URLConnectionOperation/shouldUseCredentialStorage``); default `true`.
    public var shouldUseCredentialStorage: Bool {
        get { settings.withLock { $0.shouldUseCredentialStorage } }
        set { settings.withLock { $0.shouldUseCredentialStorage = newValue } }
    }

    /// Copied onto each operation (``URLConnectionOperation/securityPolicy``).
    public var securityPolicy: SecurityPolicy {
        get { settings.withLock { $0.securityPolicy } }
        set { settings.withLock { $0.securityPolicy = newValue } }
    }

    /// Copied onto each operation; `nil` means ``URLConnectionOperation/defaultCompletionQueue``.
    public var completionQueue: DispatchQueue? {
        get { settings.withLock { $0.completionQueue } }
        set { settings.withLock { $0.completionQueue = newValue } }
    }

    /// Copied onto each operation; `nil` means a private group of Courier's.
    public var completionGroup: DispatchGroup? {
        get { settings.withLock { $0.completionGroup } }
        set { settings.withLock { $0.completionGroup = newValue } }
    }

    /// An operation for `request` with the manager's settings and the blocks as its completion; not enqueued.
    public func httpRequestOperation(
        with request: URLRequest, success: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation, any Error) -> Void)?
    ) -> HTTPRequestOperation {
        let operation = HTTPRequestOperation(request: request, transport: transport)
        let settings = settings.value
        operation.responseSerializer = settings.responseSerializer
        operation.credential = settings.credential
        operation.shouldUseCredentialStorage = settings.shouldUseCredentialStorage
        operation.securityPolicy = settings.securityPolicy
        operation.completionQueue = settings.completionQueue
        operation.completionGroup = settings.completionGroup
        operation.setCompletionBlock(success: success, failure: failure)
        return operation
    }

    // MARK: Verbs

    /// GET; parameters go in the query.
    @discardableResult
    public func get(
        _ urlString: String, parameters: Parameter?,
        success: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation?, any Error) -> Void)?
    ) -> HTTPRequestOperation? {
        enqueue("GET", urlString, parameters, success: success, failure: failure)
    }

    /// HEAD; `success` gets only the operation, as the response has no body.
    @discardableResult
    public func head(
        _ urlString: String, parameters: Parameter?, success: (@Sendable (HTTPRequestOperation) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation?, any Error) -> Void)?
    ) -> HTTPRequestOperation? {
        let bodiless: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?
        if let success {
            bodiless = { operation, _ in success(operation) }
        } else {
            bodiless = nil
        }
        return enqueue("HEAD", urlString, parameters, success: bodiless, failure: failure)
    }

    /// POST; parameters go in the body.
    @discardableResult
    public func post(
        _ urlString: String, parameters: Parameter?,
        success: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation?, any Error) -> Void)?
    ) -> HTTPRequestOperation? {
        enqueue("POST", urlString, parameters, success: success, failure: failure)
    }

    /// A multipart POST; `constructingBodyWith` runs before this returns.
    @discardableResult
    public func post(
        _ urlString: String, parameters: Parameter?,
        constructingBodyWith constructingBody: (inout MultipartFormData) throws -> Void,
        success: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation?, any Error) -> Void)?
    ) -> HTTPRequestOperation? {
        let multipart: MultipartRequest
        do {
            multipart = try builder.makeMultipartRequest(
                urlString: urlString, parameters: parameters, constructingBody: constructingBody)
        } catch {
            return fail(with: error, failure)
        }
        let operation = httpRequestOperation(with: multipart.urlRequest, success: success) { failure?($0, $1) }
        operation.store.withLock { $0.body = multipart.body }
        operationQueue.addOperation(operation)
        return operation
    }

    /// PUT; parameters go in the body.
    @discardableResult
    public func put(
        _ urlString: String, parameters: Parameter?,
        success: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation?, any Error) -> Void)?
    ) -> HTTPRequestOperation? {
        enqueue("PUT", urlString, parameters, success: success, failure: failure)
    }

    /// PATCH; parameters go in the body.
    @discardableResult
    public func patch(
        _ urlString: String, parameters: Parameter?,
        success: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation?, any Error) -> Void)?
    ) -> HTTPRequestOperation? {
        enqueue("PATCH", urlString, parameters, success: success, failure: failure)
    }

    /// DELETE; parameters go in the query.
    @discardableResult
    public func delete(
        _ urlString: String, parameters: Parameter?,
        success: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation?, any Error) -> Void)?
    ) -> HTTPRequestOperation? {
        enqueue("DELETE", urlString, parameters, success: success, failure: failure)
    }

    private func enqueue(
        _ method: String, _ urlString: String, _ parameters: Parameter?,
        success: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation?, any Error) -> Void)?
    ) -> HTTPRequestOperation? {
        let request: URLRequest
        do {
            request = try builder.makeRequest(
                method: method, urlString: urlString, parameters: parameters, headers: HTTPHeaderFields())
        } catch {
            return fail(with: error, failure)
        }
        let operation = httpRequestOperation(with: request, success: success) { failure?($0, $1) }
        operationQueue.addOperation(operation)
        return operation
    }

    private func fail(
        with error: any Error, _ failure: (@Sendable (HTTPRequestOperation?, any Error) -> Void)?
    ) -> HTTPRequestOperation? {
        (completionQueue ?? URLConnectionOperation.defaultCompletionQueue).async { failure?(nil, error) }
        return nil
    }
}
