console.log('not the bytes the manifest names');
