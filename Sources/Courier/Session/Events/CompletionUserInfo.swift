import Foundation

/// The user info of `Notification.Name.taskDidComplete`, built for every task that completes, so built
/// without hashing a key.
///
/// The keys a completion can carry are fixed (``SessionNotificationKey``), and only nine combinations occur. Each
/// has a template dictionary made once, with the positions of its keys; a completion copies its template (the copy
/// keeps the template's buckets, so nothing is hashed again) and sets the values at those positions. Hashing the
/// long AFNetworking key strings for every task cost more than posting the notification.
enum CompletionUserInfo {
    /// What a task's kind adds to the serializer, object and error.
    enum Payload: Sendable {
        case none
        /// A data task's body (``SessionNotificationKey/responseData``).
        case responseData(Data)
        /// A download's file (``SessionNotificationKey/assetPath``).
        case assetPath(URL)
    }

    /// The user info for a task that completed with `object` or `error` and took `metrics`.
    static func make(
        serializer: any ResponseSerializer, object: (any Sendable)?, error: (any Error)?, payload: Payload,
        metrics: TaskMetrics?
    ) -> [AnyHashable: Any] {
        let outcome: Int
        let outcomeValue: Any?
        if let error {
            (outcome, outcomeValue) = (2, error)
        } else if let object {
            (outcome, outcomeValue) = (1, object)
        } else {
            (outcome, outcomeValue) = (0, nil)
        }
        let payloadValue: Any?
        let kind: Int
        switch payload {
        case .none: (kind, payloadValue) = (0, nil)
        case .responseData(let data): (kind, payloadValue) = (1, data)
        case .assetPath(let url): (kind, payloadValue) = (2, url)
        }
        let template = templates[kind * 3 + outcome]
        var info = template.info
        info.values[template.serializer] = serializer
        if let metrics {
            info.values[template.metrics] = metrics
        } else {
            info[SessionNotificationKey.sessionTaskMetrics] = nil
        }
        if let index = template.payload, let payloadValue { info.values[index] = payloadValue }
        if let index = template.outcome, let outcomeValue { info.values[index] = outcomeValue }
        return info
    }

    private struct Template {
        let info: [AnyHashable: Any]
        let serializer: Dictionary<AnyHashable, Any>.Index
        let metrics: Dictionary<AnyHashable, Any>.Index
        let payload: Dictionary<AnyHashable, Any>.Index?
        let outcome: Dictionary<AnyHashable, Any>.Index?

        init(payloadKey: String?, outcomeKey: String?) {
            var info: [AnyHashable: Any] = [
                SessionNotificationKey.responseSerializer: (), SessionNotificationKey.sessionTaskMetrics: (),
            ]
            if let payloadKey { info[payloadKey] = () }
            if let outcomeKey { info[outcomeKey] = () }
            self.info = info
            func index(of key: String?) -> Dictionary<AnyHashable, Any>.Index? {
                key.flatMap { key in info.indices.first { info.keys[$0] == AnyHashable(key) } }
            }
            serializer = index(of: SessionNotificationKey.responseSerializer) ?? info.startIndex
            metrics = index(of: SessionNotificationKey.sessionTaskMetrics) ?? info.startIndex
            payload = index(of: payloadKey)
            outcome = index(of: outcomeKey)
        }
    }

    /// Indexed by payload kind × 3 + outcome (0 none, 1 object, 2 error).
    ///
    /// `nonisolated(unsafe)`: `[AnyHashable: Any]` is not `Sendable`, but these values are made once and never
    /// mutated; every use copies one.
    nonisolated(unsafe) private static let templates: [Template] = {
        let payloadKeys = [nil, SessionNotificationKey.responseData, SessionNotificationKey.assetPath]
        let outcomeKeys = [nil, SessionNotificationKey.serializedResponse, SessionNotificationKey.error]
        return payloadKeys.flatMap { payloadKey in
            outcomeKeys.map { Template(payloadKey: payloadKey, outcomeKey: $0) }
        }
    }()
}
