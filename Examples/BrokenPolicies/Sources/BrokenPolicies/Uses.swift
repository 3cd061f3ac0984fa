import RetryPolicy

/// Never built: the policy file above fails the build first.
let brokenPolicy = RetryPolicies.payments
