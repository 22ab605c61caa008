#!/bin/sh
# make_certs.sh DIR: a throwaway test CA (DIR/ca.pem) and a server certificate it
# signed for 127.0.0.1 and localhost (DIR/server.pem, DIR/server.key), made with
# the openssl tool. Exit 77 (skip) when openssl is missing.
set -eu
dir=$1
command -v openssl >/dev/null 2>&1 || { echo "SKIP: openssl is missing (apt-get install openssl)" >&2; exit 77; }
# Any other failure is the test's: exit 1 (set -e).
mkdir -p "$dir"
cd "$dir"
openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
openssl req -x509 -new -key ca.key -subj "/CN=paictl test CA" -days 2 -out ca.pem \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out server.key 2>/dev/null
openssl req -new -key server.key -subj "/CN=127.0.0.1" -out server.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -extfile server.ext -out server.pem 2>/dev/null
rm -f server.csr server.ext ca.srl
chmod 600 ca.key server.key
