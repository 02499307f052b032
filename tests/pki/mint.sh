#!/bin/sh
# Test PKI for TPP identity (ETSI TS 119 495 certificates), with the
# openssl command line only.
#
#   tests/pki/mint.sh sandbox DIR
#	The sandbox CA (DIR/ca/, its certificate also in DIR/trust/) and the
#	sandbox TPP's QSealC: RSA 2048, roles PSP_AI PSP_PI PSP_IC,
#	organizationIdentifier PSDDE-BAFIN-999999, CN Sandbox TPP GmbH, in
#	DIR/tpp.key and DIR/tpp.crt (PEM). Keeps what exists.
#   tests/pki/mint.sh test DIR [CADIR]
#	The test certificates in DIR, issued by the CA in CADIR (default:
#	a root CA of their own in DIR/ca), NAME.key + NAME.crt each:
#	  all       roles AI PI IC, PSDDE-BAFIN-999999, RSA 2048
#	  pi        role PSP_PI only
#	  aionly    roles PSP_AI PSP_IC (no PSP_PI)
#	  ec        EC P-256, roles AI PI IC
#	  expired   valid 2020 to 2021
#	  noqc      without the PSD2 QCStatement
#	  kuenc     key usage keyEncipherment only (cannot sign)
#	  revoked   listed in the CA's CRL (DIR/crl/ca.crl.pem, also copied
#	            to CADIR/../crl/ when CADIR is a sandbox CA)
#	  other     second TPP, PSDDE-BAFIN-888888
#	  untrusted from a CA nobody trusts (DIR/untrusted-ca/)
#	  qwac      TLS client certificate (QWAC), roles AI PI IC
#	  server    TLS server certificate for 127.0.0.1 and localhost
#	dh.pem (ffdhe2048, for tls_dhparam) and ca.crt, the issuing CA.
#	Keeps what exists; the CRL is regenerated every run.
set -eu

ORG_SANDBOX=PSDDE-BAFIN-999999
ORG_OTHER=PSDDE-BAFIN-888888
ROLES_ALL="AI PI IC"

die() { echo "mint.sh: $*" >&2; exit 1; }

# --- CA -----------------------------------------------------------------

ca_config() {	# cadir
	cat > "$1/ca.cnf" <<CNF
[ca]
default_ca = psd2
[psd2]
dir = $1
database = \$dir/index.txt
serial = \$dir/serial
crlnumber = \$dir/crlnumber
new_certs_dir = \$dir/issued
default_md = sha256
default_crl_days = 3650
policy = any
unique_subject = no
copy_extensions = none
email_in_dn = no
preserve = yes
[any]
countryName = optional
organizationName = optional
organizationalUnitName = optional
commonName = supplied
organizationIdentifier = optional
[req]
distinguished_name = dn
[dn]
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[crl_ext]
authorityKeyIdentifier = keyid
CNF
}

make_ca() {	# cadir CN
	[ -f "$1/ca.crt" ] && [ -f "$1/ca.key" ] && return 0
	mkdir -p "$1/issued"
	ca_config "$1"
	: > "$1/index.txt"
	openssl rand -hex 8 | tr a-f A-F > "$1/serial"
	echo 01 > "$1/crlnumber"
	openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
	    -out "$1/ca.key"
	openssl req -new -x509 -config "$1/ca.cnf" -extensions ca_ext \
	    -key "$1/ca.key" -days 3650 -sha256 -out "$1/ca.crt" \
	    -subj "/C=DE/O=psd2gate Test Trust Services/CN=$2"
	chmod 600 "$1/ca.key"
}

# --- Leaf certificates -----------------------------------------------------

# Extension section with the PSD2 QCStatement (roles: "AI PI IC").
ext_config() {	# file kind roles qc
	f=$1 kind=$2 roles=$3 qc=$4
	(
		echo "[leaf]"
		echo "basicConstraints = critical,CA:FALSE"
		case $kind in
		seal)	echo "keyUsage = critical,digitalSignature,nonRepudiation" ;;
		kuenc)	echo "keyUsage = critical,keyEncipherment" ;;
		qwac)	echo "keyUsage = critical,digitalSignature"
			echo "extendedKeyUsage = clientAuth" ;;
		server)	echo "keyUsage = critical,digitalSignature,keyEncipherment"
			echo "extendedKeyUsage = serverAuth"
			echo "subjectAltName = IP:127.0.0.1,DNS:localhost" ;;
		esac
		echo "subjectKeyIdentifier = hash"
		echo "authorityKeyIdentifier = keyid"
		[ "$qc" = yes ] || exit 0	# (a subshell)
		# RFC 3739 QCStatements: qcCompliance, then ETSI TS 119 495.
		echo "1.3.6.1.5.5.7.1.3 = ASN1:SEQUENCE:qcstatements"
		echo "[qcstatements]"
		echo "compliance = SEQUENCE:qc_compliance"
		echo "psd2 = SEQUENCE:psd2_statement"
		echo "[qc_compliance]"
		echo "id = OID:0.4.0.1862.1.1"
		echo "[psd2_statement]"
		echo "id = OID:0.4.0.19495.2"
		echo "info = SEQUENCE:psd2_qctype"
		echo "[psd2_qctype]"
		echo "roles = SEQUENCE:psd2_roles"
		echo "ncaName = UTF8:Bundesanstalt fuer Finanzdienstleistungsaufsicht"
		echo "ncaId = UTF8:DE-BAFIN"
		echo "[psd2_roles]"
		for r in $roles; do echo "role_$r = SEQUENCE:role_$r"; done
		for r in $roles; do
			case $r in
			AS) n=1 ;; PI) n=2 ;; AI) n=3 ;; IC) n=4 ;;
			*) die "unknown role $r" ;;
			esac
			echo "[role_$r]"
			echo "oid = OID:0.4.0.19495.1.$n"
			echo "name = UTF8:PSP_$r"
		done
	) > "$f"
}

# leaf cadir out name kind keyalg roles qc org cn [startdate enddate]
leaf() {
	cadir=$1 out=$2 name=$3 kind=$4 keyalg=$5 roles=$6 qc=$7 org=$8 cn=$9
	shift 9
	[ -f "$out/$name.crt" ] && [ -f "$out/$name.key" ] && return 0
	case $keyalg in
	rsa)	openssl genpkey -quiet -algorithm RSA \
		    -pkeyopt rsa_keygen_bits:2048 -out "$out/$name.key" ;;
	ec)	openssl genpkey -quiet -algorithm EC \
		    -pkeyopt ec_paramgen_curve:P-256 -out "$out/$name.key" ;;
	esac
	chmod 600 "$out/$name.key"
	subj="/C=DE/O=$cn/CN=$cn"
	[ -n "$org" ] && subj="$subj/organizationIdentifier=$org"
	openssl req -new -config "$cadir/ca.cnf" -key "$out/$name.key" \
	    -subj "$subj" -out "$out/$name.csr"
	ext_config "$out/$name.ext" "$kind" "$roles" "$qc"
	if [ $# -eq 2 ]; then dates="-startdate $1 -enddate $2"
	else dates="-days 825"; fi
	# shellcheck disable=SC2086
	openssl ca -batch -notext -config "$cadir/ca.cnf" \
	    -cert "$cadir/ca.crt" -keyfile "$cadir/ca.key" \
	    -extfile "$out/$name.ext" -extensions leaf $dates \
	    -in "$out/$name.csr" -out "$out/$name.crt" 2>/dev/null ||
	    die "openssl ca failed for $name"
	rm -f "$out/$name.csr" "$out/$name.ext"
}

crl() {	# cadir out-file
	openssl ca -config "$1/ca.cnf" -cert "$1/ca.crt" -keyfile "$1/ca.key" \
	    -gencrl -crlexts crl_ext -out "$2.tmp" 2>/dev/null ||
	    die "openssl ca -gencrl failed"
	mv "$2.tmp" "$2"	# atomic: the service never reads half a CRL
}

revoke() {	# cadir cert
	serial=$(openssl x509 -in "$2" -noout -serial | cut -d= -f2)
	grep -q "	$serial	" "$1/index.txt" 2>/dev/null &&
	    grep -q "^R.*	$serial	" "$1/index.txt" && return 0
	openssl ca -config "$1/ca.cnf" -cert "$1/ca.crt" -keyfile "$1/ca.key" \
	    -revoke "$2" -crl_reason keyCompromise 2>/dev/null ||
	    die "openssl ca -revoke failed"
}

# --- Commands --------------------------------------------------------------

sandbox() {
	dir=$1
	mkdir -p "$dir/trust" "$dir/crl"
	make_ca "$dir/ca" "psd2gate Sandbox Root CA"
	[ -f "$dir/trust/sandbox-ca.pem" ] ||
	    cp "$dir/ca/ca.crt" "$dir/trust/sandbox-ca.pem"
	leaf "$dir/ca" "$dir" tpp seal rsa "$ROLES_ALL" yes "$ORG_SANDBOX" \
	    "Sandbox TPP GmbH"
	[ -f "$dir/crl/sandbox-ca.crl.pem" ] ||
	    crl "$dir/ca" "$dir/crl/sandbox-ca.crl.pem"
}

testpki() {
	dir=$1 ca=${2:-$1/ca}
	mkdir -p "$dir/crl"
	make_ca "$ca" "psd2gate Test Root CA"
	make_ca "$dir/untrusted-ca" "Nobody Trusts Me CA"
	leaf "$ca" "$dir" all seal rsa "$ROLES_ALL" yes "$ORG_SANDBOX" \
	    "Sandbox TPP GmbH"
	leaf "$ca" "$dir" pi seal rsa "PI" yes "$ORG_SANDBOX" "Sandbox TPP GmbH"
	leaf "$ca" "$dir" aionly seal rsa "AI IC" yes "$ORG_SANDBOX" \
	    "Sandbox TPP GmbH"
	leaf "$ca" "$dir" ec seal ec "$ROLES_ALL" yes "$ORG_SANDBOX" \
	    "Sandbox TPP GmbH"
	leaf "$ca" "$dir" expired seal rsa "$ROLES_ALL" yes "$ORG_SANDBOX" \
	    "Sandbox TPP GmbH" 20200101000000Z 20210101000000Z
	leaf "$ca" "$dir" noqc seal rsa "" no "$ORG_SANDBOX" "Sandbox TPP GmbH"
	leaf "$ca" "$dir" kuenc kuenc rsa "$ROLES_ALL" yes "$ORG_SANDBOX" \
	    "Sandbox TPP GmbH"
	leaf "$ca" "$dir" revoked seal rsa "$ROLES_ALL" yes "$ORG_SANDBOX" \
	    "Sandbox TPP GmbH"
	leaf "$ca" "$dir" other seal rsa "$ROLES_ALL" yes "$ORG_OTHER" \
	    "Other TPP AG"
	leaf "$dir/untrusted-ca" "$dir" untrusted seal rsa "$ROLES_ALL" yes \
	    "$ORG_SANDBOX" "Sandbox TPP GmbH"
	leaf "$ca" "$dir" qwac qwac rsa "$ROLES_ALL" yes "$ORG_SANDBOX" \
	    "Sandbox TPP GmbH"
	leaf "$ca" "$dir" server server rsa "" no "" "localhost"
	# DH parameters for a Kore TLS listener (tls_dhparam is mandatory).
	[ -f "$dir/dh.pem" ] || openssl genpkey -genparam -algorithm DH \
	    -pkeyopt group:ffdhe2048 -out "$dir/dh.pem"
	revoke "$ca" "$dir/revoked.crt"
	crl "$ca" "$dir/crl/ca.crl.pem"
	# A sandbox CA's CRL folder is what the sandbox and tests read.
	if [ -d "$ca/../crl" ] && [ -f "$ca/../trust/sandbox-ca.pem" ]; then
		crl "$ca" "$ca/../crl/sandbox-ca.crl.pem"
	fi
	cp "$ca/ca.crt" "$dir/ca.crt"
}

[ $# -ge 2 ] || die "usage: mint.sh sandbox DIR | mint.sh test DIR [CADIR]"
command -v openssl >/dev/null || die "openssl is not installed"
umask 022
case $1 in
sandbox)	sandbox "$2" ;;
test)		testpki "$2" "${3:-}" ;;
*)		die "unknown command $1" ;;
esac
