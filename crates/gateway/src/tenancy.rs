//! Multi-tenancy, as Zeebe's gateway checks it. Off (the default): every request acts for the
//! default tenant `<default>`, and naming another is INVALID_ARGUMENT. On: every request names
//! its tenant (or, to activate and stream jobs, its tenants); a tenant id is at most 31
//! characters of letters, digits, `_`, `.` and `-` (or `<default>`); and the caller must be
//! assigned to it, else PERMISSION_DENIED (HTTP 403).
//!
//! Who the caller is comes from authentication (`auth.rs`, which multi-tenancy needs: the
//! gateway does not start with one and not the other): a basic user's name, or an OIDC token's
//! client or user claim. The assignments map such principals to their tenants; `*` assigns
//! tenants to every authenticated principal. With multi-tenancy on, the authentication layer of
//! each transport runs every call inside [`Caller::scope`], and the operations read the
//! caller's tenants with [`tenant`] and [`tenants`] while they validate the request, as Zeebe's
//! gateway reads them from the gRPC context. A call outside such a scope is a call of a
//! gateway with multi-tenancy off.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::sync::Arc;

use beeline_protocol::DEFAULT_TENANT;

use crate::error::GatewayError;

/// The longest tenant id Zeebe accepts.
pub const MAX_TENANT_ID_LENGTH: usize = 31;

/// Multi-tenancy settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TenancyConfig {
    /// Whether requests act for tenants of their own (`--multi-tenancy`); off by default.
    pub enabled: bool,
    /// Principal (basic user, OIDC client or user) → the tenants it may act for; the principal
    /// `*` stands for every authenticated caller.
    pub assignments: HashMap<String, Vec<String>>,
}

impl TenancyConfig {
    /// The tenants a principal may act for, sorted: its own and those of `*`.
    pub fn tenants_of(&self, principal: &str) -> Vec<String> {
        let mut tenants = BTreeSet::new();
        for key in [principal, "*"] {
            if let Some(assigned) = self.assignments.get(key) {
                tenants.extend(assigned.iter().cloned());
            }
        }
        tenants.into_iter().collect()
    }

    /// Reads assignments `principal=tenant+tenant,principal=tenant` (the setting's form);
    /// every tenant id must be a valid one.
    pub fn parse_assignments(text: &str) -> Result<HashMap<String, Vec<String>>, String> {
        let mut assignments: HashMap<String, Vec<String>> = HashMap::new();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (principal, tenants) = entry
                .split_once('=')
                .map(|(p, t)| (p.trim(), t.trim()))
                .filter(|(p, t)| !p.is_empty() && !t.is_empty())
                .ok_or_else(|| format!("'{entry}' is not principal=tenant+tenant"))?;
            for tenant in tenants.split('+').map(str::trim) {
                if let Some(reason) = invalid_tenant_id(tenant) {
                    return Err(format!(
                        "'{entry}': the tenant id '{tenant}' is not valid: {reason}"
                    ));
                }
                let assigned = assignments.entry(principal.to_owned()).or_default();
                if !assigned.iter().any(|t| t == tenant) {
                    assigned.push(tenant.to_owned());
                }
            }
        }
        Ok(assignments)
    }
}

/// Why a tenant id is not one Zeebe accepts, if it is not.
pub fn invalid_tenant_id(tenant_id: &str) -> Option<&'static str> {
    if tenant_id.is_empty() {
        Some("it is empty")
    } else if tenant_id.chars().count() > MAX_TENANT_ID_LENGTH {
        Some("tenant identifier is longer than 31 characters")
    } else if tenant_id != DEFAULT_TENANT
        && !tenant_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
    {
        Some("tenant identifier contains illegal characters")
    } else {
        None
    }
}

/// The tenants an authenticated caller may act for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub principal: String,
    pub tenants: Arc<[String]>,
}

tokio::task_local! {
    static CALLER: Caller;
}

impl Caller {
    /// Runs `call` as this caller: the operations it runs read the caller's tenants.
    pub async fn scope<F: Future>(self, call: F) -> F::Output {
        CALLER.scope(self, call).await
    }

    /// The caller of the call running now, if an authentication layer set one.
    pub fn current() -> Option<Caller> {
        CALLER.try_with(Caller::clone).ok()
    }
}

fn invalid(rpc: &str, tenant_id: &str, reason: &str) -> GatewayError {
    GatewayError::InvalidArgument(format!(
        "Expected to handle request {rpc} with tenant identifier '{tenant_id}', but {reason}"
    ))
}

/// Zeebe's `ensureTenantIdSet`: the tenant a request for the operation `rpc` acts for. Off:
/// empty or `<default>` is the default tenant, anything else is refused. On: the tenant must be
/// named, valid, and one the caller may act for.
pub fn tenant(rpc: &str, tenant_id: &str) -> Result<String, GatewayError> {
    let named = !tenant_id.trim().is_empty();
    let Some(caller) = Caller::current() else {
        if named && tenant_id != DEFAULT_TENANT {
            return Err(invalid(rpc, tenant_id, "multi-tenancy is disabled"));
        }
        return Ok(DEFAULT_TENANT.to_owned());
    };
    if !named {
        return Err(GatewayError::InvalidArgument(format!(
            "Expected to handle request {rpc} with multi-tenancy enabled, but no tenant identifier was provided."
        )));
    }
    if let Some(reason) = invalid_tenant_id(tenant_id) {
        return Err(invalid(rpc, tenant_id, &format!("{reason}.")));
    }
    if !caller.tenants.iter().any(|t| t == tenant_id) {
        return Err(GatewayError::PermissionDenied(format!(
            "Expected to handle request {rpc} with tenant identifier '{tenant_id}', but tenant is not authorized to perform this request"
        )));
    }
    Ok(tenant_id.to_owned())
}

/// Zeebe's `ensureTenantIdsSet`: [`tenant`] for each of a list. Off, an empty list is the
/// default tenant; on, it is refused.
pub fn tenants(rpc: &str, tenant_ids: &[String]) -> Result<Vec<String>, GatewayError> {
    if tenant_ids.is_empty() {
        if Caller::current().is_none() {
            return Ok(vec![DEFAULT_TENANT.to_owned()]);
        }
        return Err(GatewayError::InvalidArgument(format!(
            "Expected to handle request {rpc} with multi-tenancy enabled, but no tenant identifiers were provided."
        )));
    }
    let mut checked: Vec<String> = Vec::with_capacity(tenant_ids.len());
    for tenant_id in tenant_ids {
        let id = tenant(rpc, tenant_id)?;
        if !checked.contains(&id) {
            checked.push(id);
        }
    }
    Ok(checked)
}

/// The tenants whose data the caller may read: all (`None`) when multi-tenancy is off.
pub fn readable() -> Option<Arc<[String]>> {
    Caller::current().map(|caller| caller.tenants)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(tenants: &[&str]) -> Caller {
        Caller {
            principal: "demo".into(),
            tenants: tenants.iter().map(|t| t.to_string()).collect(),
        }
    }

    fn message(result: Result<String, GatewayError>) -> String {
        match result {
            Ok(tenant) => tenant,
            Err(error) => format!("{error:?}"),
        }
    }

    #[test]
    fn off_only_the_default_tenant_is_accepted() {
        assert_eq!(tenant("X", "").unwrap(), "<default>");
        assert_eq!(tenant("X", "<default>").unwrap(), "<default>");
        assert_eq!(
            tenant("CreateProcessInstance", "t").unwrap_err(),
            GatewayError::InvalidArgument(
                "Expected to handle request CreateProcessInstance with tenant identifier 't', but multi-tenancy is disabled".into()
            )
        );
        assert_eq!(tenants("X", &[]).unwrap(), vec!["<default>"]);
    }

    #[tokio::test]
    async fn on_the_tenant_must_be_named_valid_and_the_callers() {
        let check = |id: &'static str| async move {
            caller(&["tenant-a", "<default>"])
                .scope(async move { message(tenant("DeployResource", id)) })
                .await
        };
        assert_eq!(check("tenant-a").await, "tenant-a");
        assert_eq!(check("<default>").await, "<default>");
        assert_eq!(
            check("").await,
            r#"InvalidArgument("Expected to handle request DeployResource with multi-tenancy enabled, but no tenant identifier was provided.")"#
        );
        assert_eq!(
            check("tenanttenanttenanttenanttenanttenant").await,
            r#"InvalidArgument("Expected to handle request DeployResource with tenant identifier 'tenanttenanttenanttenanttenanttenant', but tenant identifier is longer than 31 characters.")"#
        );
        assert_eq!(
            check("<invalid>").await,
            r#"InvalidArgument("Expected to handle request DeployResource with tenant identifier '<invalid>', but tenant identifier contains illegal characters.")"#
        );
        assert_eq!(
            check("tenant-b").await,
            r#"PermissionDenied("Expected to handle request DeployResource with tenant identifier 'tenant-b', but tenant is not authorized to perform this request")"#
        );
        let both = caller(&["a", "b"])
            .scope(async { tenants("ActivateJobs", &["a".into(), "b".into(), "a".into()]) })
            .await;
        assert_eq!(both.unwrap(), vec!["a", "b"]);
        let none = caller(&["a"])
            .scope(async { tenants("ActivateJobs", &[]) })
            .await;
        assert!(none.is_err());
    }

    #[test]
    fn assignments_read_principals_and_their_tenants() {
        let assignments =
            TenancyConfig::parse_assignments("alice=tenant-a+tenant-b, bob=<default>, *=shared")
                .unwrap();
        let config = TenancyConfig {
            enabled: true,
            assignments,
        };
        assert_eq!(
            config.tenants_of("alice"),
            vec!["shared", "tenant-a", "tenant-b"]
        );
        assert_eq!(config.tenants_of("bob"), vec!["<default>", "shared"]);
        assert_eq!(config.tenants_of("eve"), vec!["shared"]);
        assert!(TenancyConfig::parse_assignments("alice").is_err());
        let bad = TenancyConfig::parse_assignments("alice=a b").unwrap_err();
        assert!(bad.contains("illegal characters"), "{bad}");
    }
}
