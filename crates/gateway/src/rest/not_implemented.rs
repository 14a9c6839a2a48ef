//! Every operation of Camunda 8.8's REST API that Beeline does not serve yet: each answers
//! 501 problem+json naming it, never a bare 404, so a client learns what is missing. An
//! operation moves out of this list when its handler is routed in `mod.rs`.

use axum::Router;
use axum::http::{Method, StatusCode, Uri};
use axum::routing::{MethodRouter, on};

use super::Gateway;
use super::problem::Problem;

/// (method, path, operation id) of the 8.8 API's operations not served yet.
const OPERATIONS: &[(&str, &str, &str)] = &[
    ("GET", "/v2/authentication/me", "getAuthentication"),
    ("POST", "/v2/authorizations", "createAuthorization"),
    ("POST", "/v2/authorizations/search", "searchAuthorizations"),
    (
        "DELETE",
        "/v2/authorizations/{authorizationKey}",
        "deleteAuthorization",
    ),
    (
        "GET",
        "/v2/authorizations/{authorizationKey}",
        "getAuthorization",
    ),
    (
        "PUT",
        "/v2/authorizations/{authorizationKey}",
        "updateAuthorization",
    ),
    (
        "POST",
        "/v2/batch-operation-items/search",
        "searchBatchOperationItems",
    ),
    (
        "POST",
        "/v2/batch-operations/search",
        "searchBatchOperations",
    ),
    (
        "GET",
        "/v2/batch-operations/{batchOperationKey}",
        "getBatchOperation",
    ),
    (
        "POST",
        "/v2/batch-operations/{batchOperationKey}/cancellation",
        "cancelBatchOperation",
    ),
    (
        "POST",
        "/v2/batch-operations/{batchOperationKey}/resumption",
        "resumeBatchOperation",
    ),
    (
        "POST",
        "/v2/batch-operations/{batchOperationKey}/suspension",
        "suspendBatchOperation",
    ),
    (
        "POST",
        "/v2/correlated-message-subscriptions/search",
        "searchCorrelatedMessageSubscriptions",
    ),
    ("POST", "/v2/documents", "createDocument"),
    ("POST", "/v2/documents/batch", "createDocuments"),
    ("DELETE", "/v2/documents/{documentId}", "deleteDocument"),
    ("GET", "/v2/documents/{documentId}", "getDocument"),
    (
        "POST",
        "/v2/documents/{documentId}/links",
        "createDocumentLink",
    ),
    (
        "POST",
        "/v2/element-instances/ad-hoc-activities/{adHocSubProcessInstanceKey}/activation",
        "activateAdHocSubProcessActivities",
    ),
    ("POST", "/v2/groups", "createGroup"),
    ("POST", "/v2/groups/search", "searchGroups"),
    ("DELETE", "/v2/groups/{groupId}", "deleteGroup"),
    ("GET", "/v2/groups/{groupId}", "getGroup"),
    ("PUT", "/v2/groups/{groupId}", "updateGroup"),
    (
        "POST",
        "/v2/groups/{groupId}/clients/search",
        "searchClientsForGroup",
    ),
    (
        "DELETE",
        "/v2/groups/{groupId}/clients/{clientId}",
        "unassignClientFromGroup",
    ),
    (
        "PUT",
        "/v2/groups/{groupId}/clients/{clientId}",
        "assignClientToGroup",
    ),
    (
        "POST",
        "/v2/groups/{groupId}/mapping-rules/search",
        "searchMappingRulesForGroup",
    ),
    (
        "DELETE",
        "/v2/groups/{groupId}/mapping-rules/{mappingRuleId}",
        "unassignMappingRuleFromGroup",
    ),
    (
        "PUT",
        "/v2/groups/{groupId}/mapping-rules/{mappingRuleId}",
        "assignMappingRuleToGroup",
    ),
    (
        "POST",
        "/v2/groups/{groupId}/roles/search",
        "searchRolesForGroup",
    ),
    (
        "POST",
        "/v2/groups/{groupId}/users/search",
        "searchUsersForGroup",
    ),
    (
        "DELETE",
        "/v2/groups/{groupId}/users/{username}",
        "unassignUserFromGroup",
    ),
    (
        "PUT",
        "/v2/groups/{groupId}/users/{username}",
        "assignUserToGroup",
    ),
    ("GET", "/v2/license", "getLicense"),
    ("POST", "/v2/mapping-rules", "createMappingRule"),
    ("POST", "/v2/mapping-rules/search", "searchMappingRule"),
    (
        "DELETE",
        "/v2/mapping-rules/{mappingRuleId}",
        "deleteMappingRule",
    ),
    ("GET", "/v2/mapping-rules/{mappingRuleId}", "getMappingRule"),
    (
        "PUT",
        "/v2/mapping-rules/{mappingRuleId}",
        "updateMappingRule",
    ),
    (
        "POST",
        "/v2/message-subscriptions/search",
        "searchMessageSubscriptions",
    ),
    (
        "POST",
        "/v2/process-instances/cancellation",
        "cancelProcessInstancesBatchOperation",
    ),
    (
        "POST",
        "/v2/process-instances/incident-resolution",
        "resolveIncidentsBatchOperation",
    ),
    (
        "POST",
        "/v2/process-instances/migration",
        "migrateProcessInstancesBatchOperation",
    ),
    (
        "POST",
        "/v2/process-instances/modification",
        "modifyProcessInstancesBatchOperation",
    ),
    (
        "GET",
        "/v2/process-instances/{processInstanceKey}/call-hierarchy",
        "getProcessInstanceCallHierarchy",
    ),
    (
        "POST",
        "/v2/process-instances/{processInstanceKey}/migration",
        "migrateProcessInstance",
    ),
    ("GET", "/v2/resources/{resourceKey}", "getResource"),
    (
        "GET",
        "/v2/resources/{resourceKey}/content",
        "getResourceContent",
    ),
    ("POST", "/v2/roles", "createRole"),
    ("POST", "/v2/roles/search", "searchRoles"),
    ("DELETE", "/v2/roles/{roleId}", "deleteRole"),
    ("GET", "/v2/roles/{roleId}", "getRole"),
    ("PUT", "/v2/roles/{roleId}", "updateRole"),
    (
        "POST",
        "/v2/roles/{roleId}/clients/search",
        "searchClientsForRole",
    ),
    (
        "DELETE",
        "/v2/roles/{roleId}/clients/{clientId}",
        "unassignRoleFromClient",
    ),
    (
        "PUT",
        "/v2/roles/{roleId}/clients/{clientId}",
        "assignRoleToClient",
    ),
    (
        "POST",
        "/v2/roles/{roleId}/groups/search",
        "searchGroupsForRole",
    ),
    (
        "DELETE",
        "/v2/roles/{roleId}/groups/{groupId}",
        "unassignRoleFromGroup",
    ),
    (
        "PUT",
        "/v2/roles/{roleId}/groups/{groupId}",
        "assignRoleToGroup",
    ),
    (
        "POST",
        "/v2/roles/{roleId}/mapping-rules/search",
        "searchMappingRulesForRole",
    ),
    (
        "DELETE",
        "/v2/roles/{roleId}/mapping-rules/{mappingRuleId}",
        "unassignRoleFromMappingRule",
    ),
    (
        "PUT",
        "/v2/roles/{roleId}/mapping-rules/{mappingRuleId}",
        "assignRoleToMappingRule",
    ),
    (
        "POST",
        "/v2/roles/{roleId}/users/search",
        "searchUsersForRole",
    ),
    (
        "DELETE",
        "/v2/roles/{roleId}/users/{username}",
        "unassignRoleFromUser",
    ),
    (
        "PUT",
        "/v2/roles/{roleId}/users/{username}",
        "assignRoleToUser",
    ),
    ("POST", "/v2/setup/user", "createAdminUser"),
    ("GET", "/v2/system/usage-metrics", "getUsageMetrics"),
    ("POST", "/v2/tenants", "createTenant"),
    ("POST", "/v2/tenants/search", "searchTenants"),
    ("DELETE", "/v2/tenants/{tenantId}", "deleteTenant"),
    ("GET", "/v2/tenants/{tenantId}", "getTenant"),
    ("PUT", "/v2/tenants/{tenantId}", "updateTenant"),
    (
        "POST",
        "/v2/tenants/{tenantId}/clients/search",
        "searchClientsForTenant",
    ),
    (
        "DELETE",
        "/v2/tenants/{tenantId}/clients/{clientId}",
        "unassignClientFromTenant",
    ),
    (
        "PUT",
        "/v2/tenants/{tenantId}/clients/{clientId}",
        "assignClientToTenant",
    ),
    (
        "POST",
        "/v2/tenants/{tenantId}/groups/search",
        "searchGroupIdsForTenant",
    ),
    (
        "DELETE",
        "/v2/tenants/{tenantId}/groups/{groupId}",
        "unassignGroupFromTenant",
    ),
    (
        "PUT",
        "/v2/tenants/{tenantId}/groups/{groupId}",
        "assignGroupToTenant",
    ),
    (
        "POST",
        "/v2/tenants/{tenantId}/mapping-rules/search",
        "searchMappingRulesForTenant",
    ),
    (
        "DELETE",
        "/v2/tenants/{tenantId}/mapping-rules/{mappingRuleId}",
        "unassignMappingRuleFromTenant",
    ),
    (
        "PUT",
        "/v2/tenants/{tenantId}/mapping-rules/{mappingRuleId}",
        "assignMappingRuleToTenant",
    ),
    (
        "POST",
        "/v2/tenants/{tenantId}/roles/search",
        "searchRolesForTenant",
    ),
    (
        "DELETE",
        "/v2/tenants/{tenantId}/roles/{roleId}",
        "unassignRoleFromTenant",
    ),
    (
        "PUT",
        "/v2/tenants/{tenantId}/roles/{roleId}",
        "assignRoleToTenant",
    ),
    (
        "POST",
        "/v2/tenants/{tenantId}/users/search",
        "searchUsersForTenant",
    ),
    (
        "DELETE",
        "/v2/tenants/{tenantId}/users/{username}",
        "unassignUserFromTenant",
    ),
    (
        "PUT",
        "/v2/tenants/{tenantId}/users/{username}",
        "assignUserToTenant",
    ),
    ("POST", "/v2/users", "createUser"),
    ("POST", "/v2/users/search", "searchUsers"),
    ("DELETE", "/v2/users/{username}", "deleteUser"),
    ("GET", "/v2/users/{username}", "getUser"),
    ("PUT", "/v2/users/{username}", "updateUser"),
];

/// Adds the unserved operations to `router`, all methods of a path on one route.
pub(super) fn add(mut router: Router<Gateway>) -> Router<Gateway> {
    let mut paths: Vec<&str> = OPERATIONS.iter().map(|(_, path, _)| *path).collect();
    paths.dedup();
    for path in paths {
        let mut route: MethodRouter<Gateway> = MethodRouter::new();
        for (method, _, operation) in OPERATIONS.iter().filter(|(_, p, _)| *p == path) {
            let Ok(method) = method.parse::<Method>() else {
                continue;
            };
            let Ok(filter) = method.clone().try_into() else {
                continue;
            };
            let operation: &'static str = operation;
            route = route.merge(on(filter, move |uri: Uri| async move {
                Problem::new(
                    StatusCode::NOT_IMPLEMENTED,
                    "UNIMPLEMENTED",
                    format!(
                        "Beeline does not serve the operation {operation} ({method} {path}) of \
                         the Camunda 8.8 REST API yet"
                    ),
                )
                .at(uri.path())
            }));
        }
        router = router.route(path, route);
    }
    router
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_are_sorted_by_path_so_each_path_is_one_route() {
        let paths: Vec<&str> = OPERATIONS.iter().map(|(_, path, _)| *path).collect();
        let mut sorted = paths.clone();
        sorted.sort_unstable();
        assert_eq!(paths, sorted);
        assert!(
            OPERATIONS
                .iter()
                .all(|(m, _, _)| m.parse::<Method>().is_ok())
        );
    }
}
