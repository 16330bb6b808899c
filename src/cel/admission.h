/*
 * admission.h - an admission expression (a ValidatingAdmissionPolicy's
 * validations, messageExpressions, auditAnnotations, variables and
 * matchConditions; a webhook's matchConditions) compiled as kube 1.32's
 * admission/plugin/cel compiler compiles it when the object is written:
 * parsed, type-checked (cel/check.h) with the variables declared as kube
 * declares them, and its result type held to the ones the expression may
 * have.
 *
 * The declarations (createEnvForOpts, BuildRequestType,
 * BuildNamespaceType, newCompositionState): object, oldObject and params
 * dyn (typed in the policy type checker's mode, sk_cel_adm_typecheck);
 * namespaceObject a kubernetes.Namespace and request a
 * kubernetes.AdmissionRequest with the fields kube gives them; authorizer
 * and authorizer.requestResource the authz library's types when the
 * expression may use them; variables, when a policy composes some, a
 * kubernetes.variables whose fields are the variables compiled before
 * (in order; each with its result type as convertCelTypeToDeclType keeps
 * it: primitives and lists and maps of them, anything else dyn; one that
 * failed to compile dyn), so a variable sees only those before it.
 *
 * Used when the expressions are written (kube/validate.c) and when the
 * stored ones are compiled for evaluation (policy/vap.c, conditions.c),
 * as kube compiles them in both places.
 *
 * The environment is the stored one (kube 1.32's libraries, two-variable
 * comprehensions included) for an expression the object already had, the
 * compatibility version's (1.31: without them) for a new one.
 */
#ifndef SK_CEL_ADMISSION_H
#define SK_CEL_ADMISSION_H

#include "cel/ast.h"
#include "cel/check.h"
#include "cel/types.h"
#include "core/arena.h"
#include "core/buf.h"

/* OptionalVariableDeclarations: what is declared beyond object, oldObject,
 * namespaceObject and request. */
enum {
    SK_CEL_ADM_PARAMS = 1,     /* params */
    SK_CEL_ADM_AUTHORIZER = 2, /* authorizer, authorizer.requestResource */
    SK_CEL_ADM_VARIABLES = 4,  /* variables (a composing compiler's) */
};

/* The types an expression must give (its accessor's ReturnTypes). */
typedef enum sk_cel_adm_result {
    SK_CEL_ADM_BOOL,           /* validations, matchConditions */
    SK_CEL_ADM_STRING,         /* messageExpressions */
    SK_CEL_ADM_STRING_OR_NULL, /* auditAnnotations' valueExpressions */
    SK_CEL_ADM_ANY,            /* variables */
} sk_cel_adm_result;

/* One compiler: the variables composed so far, in a (borrowed). */
typedef struct sk_cel_adm sk_cel_adm;
sk_cel_adm *sk_cel_adm_new(sk_arena *a);

/*
 * Puts c in the mode of kube's ValidatingAdmissionPolicy type checker
 * (policy/validating/typechecking.go: buildEnvSet, typeCheckingCompiler):
 * object and oldObject of type object, params of type params or, when
 * params is NULL, not declared at all (kube declares params only when
 * paramKind's schema resolves), authorizer declared but not
 * authorizer.requestResource, namespaceObject and request as always.
 * Their fields are read by field(field_ctx, ...) (object types whose data
 * is not this module's). A failure's detail is then cel-go's issues alone
 * (kube's typeCheckingCompiler words it so); compile with
 * SK_CEL_ADM_ANY, as it enforces no result type. Types borrowed; they
 * must outlive c.
 */
void sk_cel_adm_typecheck(sk_cel_adm *c, const sk_cel_ty *object, const sk_cel_ty *params,
                          sk_cel_check_field_fn field, void *field_ctx);

/*
 * Compiles the expression src (borrowed; must outlive the compiler's
 * arena) with decl's variables declared, in the stored environment when
 * stored is 1, else the new one. The expression's tree (in the
 * compiler's arena) when it compiles to a type result allows, else NULL
 * with kube's error detail appended to detail:
 * "compilation failed: <cel-go's issues>", "must evaluate to bool but
 * got int", "must evaluate to one of [string null_type] but got int".
 * variable (NULL for none): the name a composed variable gets, with the
 * type src gives (dyn when it fails), for the expressions compiled after.
 */
const sk_cel_expr *sk_cel_adm_compile(sk_cel_adm *c, const char *src, unsigned decl, int stored,
                                      sk_cel_adm_result result, const char *variable,
                                      sk_buf *detail);

#endif
